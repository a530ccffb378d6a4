// The registry's lookups and the fields every model has (see model_kind.h).
#include "core/config/model_kind.h"

#include <algorithm>
#include <stdexcept>

namespace ndr {

const std::vector<const ModelKindInfo*>& modelKinds() {
    return ModelKinds::infos();
}

const ModelKindInfo& kindOf(const ModelConfig& m) {
    return *modelKinds().at(m.kind.index());
}

const ModelKindInfo* kindNamed(const std::string& id) {
    for (const ModelKindInfo* k : modelKinds())
        if (k->id == id)
            return k;
    return nullptr;
}

const std::vector<ModelField>& commonModelFields() {
    static const std::vector<ModelField> fields = [] {
        std::vector<ModelField> f;
        f.push_back(textField<ModelConfig>(
            "name", "name", "The model's name in plots and the inspector; names must be unique.",
            &ModelConfig::name));
        ModelField kind;
        kind.key = "kind";
        kind.label = "kind";
        kind.type = FieldType::Choice;
        for (const ModelKindInfo* k : modelKinds()) {
            kind.choices.push_back({k->id, k->label});
            kind.help += (kind.help.empty() ? "" : "\n") + k->label + ": " + k->help;
        }
        kind.get = [](const ModelConfig& m) { return FieldValue(kindOf(m).id); };
        kind.set = [](ModelConfig& m, const FieldValue& v) {
            const ModelKindInfo* k = kindNamed(std::get<std::string>(v));
            if (!k || k == &kindOf(m))
                return;
            ModelConfig fresh = k->defaults();
            fresh.name = m.name;
            fresh.learningRate = m.learningRate;
            fresh.weightDecay = m.weightDecay;
            m = fresh;
        };
        f.push_back(kind);
        ModelField rate = realField<ModelConfig>(
            "learningRate", "learn. rate",
            "This model's AdamW learning rate; 'run's' uses the training group's rate.",
            &ModelConfig::learningRate, 0, 1, 1e-4, FieldRange::Custom, "run's");
        rate.check = [](const ModelConfig& m) {
            return m.learningRate < 0 || m.learningRate > 1
                       ? "must be 0 (the run's rate) or in (0, 1], got " + numberText(m.learningRate)
                       : std::string();
        };
        f.push_back(rate);
        ModelField decay =
            realField<ModelConfig>("weightDecay", "weight decay",
                                   "This model's AdamW weight decay; 'run's' uses the training group's.",
                                   &ModelConfig::weightDecay, -1, 1, 1e-3, FieldRange::Custom, "run's");
        decay.check = [](const ModelConfig& m) {
            return m.weightDecay != -1 && (m.weightDecay < 0 || m.weightDecay > 1)
                       ? "must be -1 (the run's weight decay) or between 0 and 1, got " +
                             numberText(m.weightDecay)
                       : std::string();
        };
        f.push_back(decay);
        return f;
    }();
    return fields;
}

std::vector<ModelField> modelFieldsOf(const ModelKindInfo& kind) {
    const std::vector<ModelField>& common = commonModelFields();
    std::vector<ModelField> all(common.begin(), common.begin() + 2);
    all.insert(all.end(), kind.fields.begin(), kind.fields.end());
    all.insert(all.end(), common.begin() + 2, common.end());
    return all;
}

long long intFieldOf(const ModelConfig& m, const std::string& key, long long fallback) {
    for (const ModelField& f : kindOf(m).fields)
        if (f.key == key && f.type == FieldType::Int)
            return std::get<long long>(f.get(m));
    return fallback;
}

void disableDropout(ModelConfig& m) {
    for (const ModelField& f : kindOf(m).fields) {
        const bool isDropout = f.key == "dropout" || (f.key.size() > 7 && f.key.ends_with("Dropout"));
        if (isDropout && f.type == FieldType::Real)
            f.set(m, FieldValue(0.0));
    }
}

std::vector<const ModelPreset*> modelPresets() {
    std::vector<const ModelPreset*> all;
    for (const ModelKindInfo* k : modelKinds())
        for (const ModelPreset& p : k->presets)
            all.push_back(&p);
    return all;
}

const ModelPreset* modelPresetNamed(const std::string& id) {
    for (const ModelPreset* p : modelPresets())
        if (p->id == id || std::find(p->aliases.begin(), p->aliases.end(), id) != p->aliases.end())
            return p;
    return nullptr;
}

const ModelPreset* modelPresetOf(const ModelConfig& m) {
    for (const ModelPreset& p : kindOf(m).presets)
        if (p.matches(m))
            return &p;
    return nullptr;
}

} // namespace ndr

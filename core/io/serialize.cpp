// JSON forms of the configuration. Reading is strict: every field is checked for presence and type,
// and errors carry the field's path ("models[1].heads: expected an integer, got string"); ranges are
// checked by validate().
#include "core/config/model_kind.h"
#include "core/io/json_fields.h"

#include <set>

#include <cctype>

namespace ndr {

namespace jsonio {

// --- Readers with paths ---

void readTask(const json& j, TaskConfig& c, const std::string& path, bool required) {
    const Fields f(j, path, required);
    // Optional: absent means compositional table lookup.
    f.readEnumOptional("kind", c.kind, taskKindNames());
    f.read("symbols", c.symbols);
    f.read("functions", c.functions);
    f.read("trainMinDepth", c.trainMinDepth);
    f.read("trainMaxDepth", c.trainMaxDepth);
    f.read("validMinDepth", c.validMinDepth);
    f.read("validMaxDepth", c.validMaxDepth);
    f.read("testMinDepth", c.testMinDepth);
    f.read("testMaxDepth", c.testMaxDepth);
    f.readEnum("order", c.order, kOrders);
    f.read("seed", c.seed);
    f.read("evalExamplesPerDepth", c.evalExamplesPerDepth);
    // ListOps' operation subset: optional, absent means all four (run files from before it).
    if (const json* ops = find(j, "operations"))
        c.operations = toArray<std::string>(*ops, field(path, "operations"), toString);
}

// One field's value from JSON, checked for its type.
FieldValue fieldValue(const ModelField& f, const json& v, const std::string& path) {
    switch (f.type) {
    case FieldType::Int:
        return (long long)toInt(v, path);
    case FieldType::Real:
        return toDouble(v, path, false);
    case FieldType::Bool:
        return toBool(v, path);
    case FieldType::Text:
        return toString(v, path);
    case FieldType::Choice:
        break;
    }
    std::string expected;
    for (size_t i = 0; i < f.choices.size(); ++i)
        expected += std::string(i == 0 ? "" : i + 1 == f.choices.size() ? " or " : ", ") + f.choices[i].name;
    if (!v.is_string())
        fail(path, "expected one of " + expected + ", got " + describe(v));
    const std::string name = v.get<std::string>();
    for (const FieldChoice& c : f.choices)
        if (c.name == name)
            return name;
    fail(path, "unknown value '" + name + "'; expected " + expected);
}

json fieldJson(const ModelField& f, const FieldValue& v) {
    switch (f.type) {
    case FieldType::Int:
        return std::get<long long>(v);
    case FieldType::Real:
        return f.floatStorage ? floatJson(float(std::get<double>(v))) : doubleJson(std::get<double>(v));
    case FieldType::Bool:
        return std::get<bool>(v);
    case FieldType::Text:
    case FieldType::Choice:
        break;
    }
    return std::get<std::string>(v);
}

// The file formats' history, in one place: the model fields that were added after run files were first
// written. A file without one reads it as its default; every other field must be there.
bool addedLater(const std::string& key) {
    static const std::set<std::string> later = {
        "learningRate", "kind",         "weightDecay",   "lstmHidden", "lstmEmbedding",
        "operators",    "positionDims", "headRouting",   "routeTopK",  "routeDropped",
        "routeEntropy", "thoughtCost",  "haltThreshold", "haltOn",     "readout"};
    return later.count(key) > 0;
}

void readModel(const json& j, ModelConfig& c, const std::string& path, bool required) {
    expectObject(j, path);
    const ModelField& kindField = commonModelFields()[1];
    if (const json* k = find(j, "kind"))
        kindField.set(c, fieldValue(kindField, *k, field(path, "kind")));
    else if (required)
        kindField.set(c, std::string("encoder")); // files from before other kinds
    const ModelKindInfo& kind = kindOf(c);
    for (const ModelField& f : modelFieldsOf(kind)) {
        if (f.key == "kind")
            continue;
        const json* v = find(j, f.key.c_str());
        for (const auto& [old, now] : kind.renamedKeys)
            if (!v && now == f.key)
                v = find(j, old.c_str());
        if (v)
            f.set(c, fieldValue(f, *v, field(path, f.key)));
        else if (required && !addedLater(f.key))
            fail(field(path, f.key), "missing");
    }
}

// In a config file's model overrides, a field of another kind than the model's is a mistake (an LSTM
// has no readout column): refused, naming the field. Files the app writes in full may hold every
// kind's fields side by side; those read as before.
void refuseOtherKindsFields(const json& j, const ModelConfig& c, const std::string& path) {
    const ModelKindInfo& kind = kindOf(c);
    std::set<std::string> own = {"preset"};
    for (const ModelField& f : modelFieldsOf(kind))
        own.insert(f.key);
    for (const auto& [old, now] : kind.renamedKeys)
        own.insert(old);
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (own.count(it.key()))
            continue;
        for (const ModelKindInfo* other : modelKinds()) {
            const auto fields = modelFieldsOf(*other);
            if (std::any_of(fields.begin(), fields.end(),
                            [&](const ModelField& f) { return f.key == it.key(); }))
                fail(field(path, it.key()), "is a field of " + other->label +
                                                " models; this model is of kind " + kind.id + " (" +
                                                kind.label + ")");
        }
    }
}

void readTrain(const json& j, TrainConfig& c, const std::string& path, bool required) {
    const Fields f(j, path, required);
    f.read("batchSize", c.batchSize);
    f.read("learningRate", c.learningRate);
    f.read("weightDecay", c.weightDecay);
    f.read("gradClip", c.gradClip);
    f.read("steps", c.steps);
    f.read("evalInterval", c.evalInterval);
    f.read("seed", c.seed);
    f.read("threads", c.threads);
    // Optional: absent means training for every step.
    f.readOptional("stopPatience", c.stopPatience);
    f.readOptional("stopIid", c.stopIid);
    // Optional: absent means a constant rate.
    f.readOptional("lrDecaySteps", c.lrDecaySteps);
    f.readOptional("lrDecayFactor", c.lrDecayFactor);
    f.readOptional("warmupSteps", c.warmupSteps);
    f.readOptional("cosineDecay", c.cosineDecay);
}

std::vector<ModelConfig> readModels(const json& j, const std::string& path) {
    expectArray(j, path);
    std::vector<ModelConfig> models(j.size());
    for (size_t i = 0; i < j.size(); ++i)
        readModel(j[i], models[i], item(path, i), true);
    return models;
}

void readRunConfig(const json& j, RunConfig& c, const std::string& path) {
    // "preset" is only a label of where the configuration came from: optional.
    Fields(j, path, false).read("preset", c.preset);
    readTask(require(j, "task", path), c.task, field(path, "task"), true);
    c.models = readModels(require(j, "models", path), field(path, "models"));
    readTrain(require(j, "train", path), c.train, field(path, "train"), true);
}

} // namespace jsonio

using namespace jsonio;

// --- Configuration ---

void to_json(json& j, const TaskConfig& c) {
    j = json{{"kind", enumName(c.kind, taskKindNames())},
             {"symbols", c.symbols},
             {"functions", c.functions},
             {"trainMinDepth", c.trainMinDepth},
             {"trainMaxDepth", c.trainMaxDepth},
             {"validMinDepth", c.validMinDepth},
             {"validMaxDepth", c.validMaxDepth},
             {"testMinDepth", c.testMinDepth},
             {"testMaxDepth", c.testMaxDepth},
             {"order", enumName(c.order, kOrders)},
             {"seed", c.seed},
             {"evalExamplesPerDepth", c.evalExamplesPerDepth}};
    if (factsOf(c.kind).operations)
        j["operations"] = c.operations;
}
void from_json(const json& j, TaskConfig& c) {
    readTask(j, c, "", true);
}

void to_json(json& j, const ModelConfig& c) {
    j = json::object();
    for (const ModelField& f : modelFieldsOf(kindOf(c)))
        j[f.key] = fieldJson(f, f.get(c));
}
void from_json(const json& j, ModelConfig& c) {
    readModel(j, c, "", true);
}

void to_json(json& j, const TrainConfig& c) {
    j = json{{"batchSize", c.batchSize},
             {"learningRate", doubleJson(c.learningRate)},
             {"weightDecay", doubleJson(c.weightDecay)},
             {"gradClip", doubleJson(c.gradClip)},
             {"lrDecaySteps", c.lrDecaySteps},
             {"lrDecayFactor", doubleJson(c.lrDecayFactor)},
             {"warmupSteps", c.warmupSteps},
             {"cosineDecay", c.cosineDecay},
             {"steps", c.steps},
             {"evalInterval", c.evalInterval},
             {"seed", c.seed},
             {"threads", c.threads},
             {"stopPatience", c.stopPatience},
             {"stopIid", doubleJson(c.stopIid)}};
}
void from_json(const json& j, TrainConfig& c) {
    readTrain(j, c, "", true);
}

void to_json(json& j, const RunConfig& c) {
    j = json{{"preset", c.preset}, {"task", c.task}, {"models", c.models}, {"train", c.train}};
}
void from_json(const json& j, RunConfig& c) {
    readRunConfig(j, c, "");
}

// --- Config files ---

namespace {

json parseJson(const std::string& text) {
    checkJsonSize(text, size_t(1) << 20); // a configuration holds about a hundred values
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        throw std::runtime_error("invalid JSON at byte " + std::to_string(e.byte) + ": " + jsonMessage(e));
    } catch (const json::exception& e) { // a number too large for a double ("1e400")
        throw std::runtime_error("invalid JSON: " + jsonMessage(e));
    }
}

// Edits (insert, delete, replace, swap of neighbours) between two short names, ignoring case, for
// "did you mean" hints.
size_t editDistance(const std::string& a, const std::string& b) {
    const auto same = [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    };
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
        for (size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min(
                {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
            if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

// Adds "<path>.<key>: unknown field ..." for each key of `j` not in `known`: a misspelt field in a
// config file would otherwise be ignored silently and the run would use the default.
void unknownFields(const json& j, const std::string& path, const std::vector<std::string>& known,
                   std::vector<std::string>& problems) {
    if (!j.is_object())
        return; // the reader reports the wrong type
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        if (std::find(known.begin(), known.end(), key) != known.end())
            continue;
        std::string closest;
        size_t best = 3; // at most two edits away (or differing only in case)
        for (const std::string& k : known)
            if (key.size() <= k.size() + 2) // a longer key cannot be two edits away; skips pasted text
                if (const size_t d = editDistance(key, k);
                    d < best && d * 3 <= std::max(key.size(), k.size()))
                    best = d, closest = k;
        std::string all;
        for (const std::string& k : known)
            all += (all.empty() ? "" : ", ") + k;
        // Keys are user text: keep a pasted paragraph out of the message.
        const std::string shown = key.size() > 40 ? key.substr(0, 40) + "..." : key;
        problems.push_back(
            field(path, shown) + ": unknown field" +
            (closest.empty() ? "; known fields are " + all : "; did you mean " + closest + "?"));
    }
}

std::vector<std::string> keysOf(const json& j) {
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it)
        keys.push_back(it.key());
    return keys;
}

// Every unknown field of a config file, each on its own line; the known ones are those the file's
// sections are written with, so the lists cannot drift from the readers.
void checkFieldNames(const json& j) {
    std::vector<std::string> problems;
    // "comment": JSON has no comments, so a config file may carry one note.
    unknownFields(j, "", {"preset", "task", "models", "train", "comment"}, problems);
    if (const json* task = find(j, "task")) {
        std::vector<std::string> known; // every field of every task kind's section
        for (const TaskKindFacts& f : taskKinds()) {
            TaskConfig ofKind;
            ofKind.kind = f.kind;
            for (std::string& k : keysOf(json(ofKind)))
                if (std::find(known.begin(), known.end(), k) == known.end())
                    known.push_back(std::move(k));
        }
        std::sort(known.begin(), known.end());
        unknownFields(*task, "task", known, problems);
    }
    if (const json* train = find(j, "train"))
        unknownFields(*train, "train", keysOf(json(TrainConfig{})), problems);
    if (const json* models = find(j, "models"); models && models->is_array()) {
        // A model's fields are its kind's; files that hold every kind's fields side by side read too,
        // so any kind's field is known.
        std::vector<std::string> known = {"preset"};
        for (const ModelKindInfo* k : modelKinds())
            for (const ModelField& f : modelFieldsOf(*k))
                if (std::find(known.begin(), known.end(), f.key) == known.end())
                    known.push_back(f.key);
        for (size_t i = 0; i < models->size(); ++i)
            unknownFields((*models)[i], item("models", i), known, problems);
    }
    if (!problems.empty()) {
        // A few lines say what is wrong; a file of ten thousand stray keys must not make a 10000-line box.
        constexpr size_t kMaxListed = 20;
        std::string message;
        for (size_t i = 0; i < problems.size() && i < kMaxListed; ++i)
            message += (message.empty() ? "" : "\n") + problems[i];
        if (problems.size() > kMaxListed)
            message += "\n... and " + std::to_string(problems.size() - kMaxListed) + " more unknown fields";
        throw std::runtime_error(message);
    }
}

// "models" of a preset-based config: replaces the preset's list. An entry starts from the model preset
// it names (a kind's, ModelKindInfo::presets, sized from the run preset's models), else from the
// preset's model at the same index; its fields override. Beyond the preset's list an entry without a
// model preset must give every field.
std::vector<ModelConfig> readModelOverrides(const json& j, const std::vector<ModelConfig>& base) {
    expectArray(j, "models");
    std::vector<ModelConfig> models(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string path = item("models", i);
        expectObject(j[i], path);
        ModelConfig& m = models[i];
        if (const json* preset = find(j[i], "preset")) {
            const std::string name = toString(*preset, field(path, "preset"));
            const ModelPreset* p = modelPresetNamed(name);
            if (!p) {
                std::string known;
                for (const ModelPreset* q : modelPresets())
                    known += (known.empty() ? "" : ", ") + q->id;
                fail(field(path, "preset"), "unknown model preset '" + name + "'; expected one of " + known);
            }
            m = p->make(base);
            readModel(j[i], m, path, false);
            refuseOtherKindsFields(j[i], m, path);
        } else if (i < base.size()) {
            m = base[i];
            readModel(j[i], m, path, false);
            refuseOtherKindsFields(j[i], m, path);
        } else {
            readModel(j[i], m, path, true);
        }
    }
    return models;
}

} // namespace

RunConfig runConfigFromJson(const std::string& text) {
    const json j = parseJson(text);
    if (!j.is_object())
        fail("", "a run configuration must be a JSON object, got " + describe(j));
    checkFieldNames(j);
    RunConfig c;
    const json* preset = find(j, "preset");
    const std::string presetName = preset ? toString(*preset, "preset") : "custom";
    const auto names = presetNames();
    const bool builtIn = std::find(names.begin(), names.end(), presetName) != names.end();
    const bool complete = find(j, "task") && find(j, "models") && find(j, "train");
    if (builtIn) {
        c = presetConfig(presetName);
        if (const json* task = find(j, "task"))
            readTask(*task, c.task, "task", false);
        if (const json* train = find(j, "train"))
            readTrain(*train, c.train, "train", false);
        if (const json* models = find(j, "models"))
            c.models = readModelOverrides(*models, presetConfig(presetName).models);
    } else if (presetName == "custom" || complete) {
        // A full configuration; its "preset" is only a label.
        try {
            readRunConfig(j, c, "");
        } catch (const std::runtime_error& e) {
            const std::string what = e.what();
            if (what.size() < 9 || what.compare(what.size() - 9, 9, ": missing") != 0)
                throw;
            throw std::runtime_error(what + " (a configuration without a built-in \"preset\" must give every "
                                            "field; {\"preset\": \"stub\", ...} gives only the changes)");
        }
    } else {
        try {
            presetConfig(presetName);
        } catch (const std::invalid_argument& e) {
            fail("preset", e.what());
        }
    }
    if (const std::vector<Problem> problems = validate(c); !problems.empty())
        throw std::runtime_error(problemsText(problems));
    return c;
}

} // namespace ndr

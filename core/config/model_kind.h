// What code outside a model kind's folder may know of the kind (docs/design.md §2): its name, its field
// table, validation, facts, presets, product shapes and checkpoint rule. Code elsewhere asks the kind
// through these; it does not switch on it. Each kind's description is defined in its folder
// (core/models/<kind>/kind.cpp) and listed once, in core/models/kinds.h.
#pragma once

#include "core/config/config.h"

#include <functional>
#include <string>
#include <vector>

namespace ndr {

// A field of a model's configuration, as code that does not know the kind sees it: a Field of the
// whole ModelConfig (its get and set read the kind's configuration inside).
using ModelField = Field<ModelConfig>;

// The facts of one configured model that code outside its kind reads.
struct ModelFacts {
    bool stepped = true;      // runs steps (layer applications, iterations); false: token by token
    int steps = 0;            // in training (0 without steps)
    int evalSteps = 0;        // at evaluation
    bool sharedSteps = true;  // one set of weights for every step: it may run more steps than trained
    bool gates = false;       // its traces record a gate per position and step
    std::string gateName;     // what that gate is, for labels ("copy gate", "operators' weight")
    int heads = 0;            // attention heads its traces record (0: no attention)
    bool headRouting = false; // routes its heads (head usage, routing entropy)
    int routeTopK = 0;        // heads kept per token and step by the routing (0: all)
    std::string routeRule;    // how the heads left out are weighted ("masked", "seed-exact")
    double thoughtCost = 0;   // the urgency of its thought cost (0: none)
    double haltThreshold = 0; // evaluation halts examples below this (0: runs every step)
    HaltSignal haltOn = HaltSignal::Gates;
    bool halts[2] = {false, false}; // which HaltSignal it has, by the enum's value
    ReadoutColumn readout = ReadoutColumn::Last;
    bool readoutChoice = false; // the readout column is its to choose
    // Non-empty for a model that halts by a learned rule in every forward (adaptive computation time):
    // the rule, for labels ("ACT at 0.99"). Its evaluations count the steps it ran; it has no run of
    // every step to compare them with.
    std::string learnedHalting;
};

// One matrix product of a training step, (m, k) x (k, n), for `ndr bench`'s sgemm reference.
struct ProductShape {
    long long m, n, k;
};

// The products of a linear map Y = X W^T over n rows, W (out, in), in a training step: the forward
// (n, out, in), the input gradient dX = dY W (n, in, out) and the weight gradient dW = dY^T X (out, in, n).
inline void addLinearMapProducts(std::vector<ProductShape>& g, long long n, long long out, long long in) {
    g.push_back({n, out, in});
    g.push_back({n, in, out});
    g.push_back({out, in, n});
}

// A model preset: a named starting point of the kind ("ndr", "transformer", "lstm"), sized from the
// run preset's models as the authors' sweeps size them.
struct ModelPreset {
    std::string id;                   // in config files ({"preset": "rel-gate"}) and the panel's picker
    std::vector<std::string> aliases; // other names config files may use ("vanilla")
    std::string label;                // the model's name, as the paper's table writes the row
    // The preset sized from `models` (the run preset's list, never empty).
    std::function<ModelConfig(const std::vector<ModelConfig>& models)> make;
    // The preset applied to a model the user edits: its switches and name, the rest of `m` kept where
    // the kind is the same (the panel's picker).
    std::function<void(ModelConfig& m)> apply;
    // Whether `m` has this preset's switches (sizes and rates aside): what the picker shows.
    std::function<bool(const ModelConfig& m)> matches;
};

// A run preset a kind brings (core/config/presets.cpp lists the built-in ones).
struct RunPreset {
    std::string name;
    std::function<RunConfig()> make;
};

struct ModelKindInfo {
    std::string id;    // "kind" in files: "encoder", "lstm", "thoughtnet"
    std::string label; // in the panel: "encoder", "LSTM", "ThoughtNet"
    std::string help;  // the panel's tooltip line of the kind
    // Its configuration's fields, each at models[i].<key>. Fields of the same key in several kinds share
    // a row of the panel.
    std::vector<ModelField> fields;
    // Keys older files used for a field ({old, new}), read as the new one.
    std::vector<std::pair<std::string, std::string>> renamedKeys;
    // A model of this kind as the panel starts it when a column switches to the kind.
    std::function<ModelConfig()> defaults;
    // The rules between fields (every field's own range is checked from the table), at `at`
    // ("models[1]"), and those between the model and the run's task.
    std::function<void(const ModelConfig& m, const TaskConfig& task, const std::string& at, Problems& p)>
        validate;
    std::function<ModelFacts(const ModelConfig&)> facts;
    // Another halting at evaluation (`ndr eval --halt-threshold`, the inspector); a kind without the
    // signal keeps running every step.
    std::function<void(ModelConfig&, double threshold, HaltSignal on)> setHalting;
    // The keys of the fields that decide its parameters: a checkpoint saved by a model of this kind
    // holds another's parameters when these fields' values are equal.
    std::vector<std::string> parameterFields;
    // The large matrix products of one training step on `rows` activation rows (batch `batch`, R
    // readouts per example, `symbols` answers): its forward, input gradient and weight gradient.
    std::function<std::vector<ProductShape>(const ModelConfig&, long long rows, int symbols, int batch,
                                            int readouts)>
        stepProducts;
    std::vector<ModelPreset> presets;
    std::vector<RunPreset> runPresets;
    // After a field of a column was edited in the panel: what follows from it (routing ticked on
    // starts its entropy term at the write-up's 0.01). Null: nothing.
    std::function<void(ModelConfig& m, const ModelConfig& before)> edited;
};

// Every kind, in the order of ModelKinds.
const std::vector<const ModelKindInfo*>& modelKinds();
// The kind of a configured model.
const ModelKindInfo& kindOf(const ModelConfig& m);
// The kind a file names ("encoder"), or null.
const ModelKindInfo* kindNamed(const std::string& id);
inline ModelFacts factsOf(const ModelConfig& m) {
    return kindOf(m).facts(m);
}
// Whether a model has the signal to halt on (gates, or the change per step).
inline bool hasHaltSignal(const ModelConfig& m, HaltSignal signal) {
    return factsOf(m).halts[int(signal)];
}

// The value of an integer field of `m`'s kind by its key ("dModel"), or `fallback` when its kind has
// none: how a preset of one kind is sized like a model of another.
long long intFieldOf(const ModelConfig& m, const std::string& key, long long fallback);

// Every dropout rate of `m` set to 0: its Real fields named "dropout" or "...Dropout" (the convention
// of every kind's field table).
void disableDropout(ModelConfig& m);

// Every model preset of every kind, in the registry's order.
std::vector<const ModelPreset*> modelPresets();
const ModelPreset* modelPresetNamed(const std::string& id);
// The preset whose switches `m` has, or null.
const ModelPreset* modelPresetOf(const ModelConfig& m);

// A field of a kind's own configuration as a field of ModelConfig.
template <typename C> ModelField modelField(Field<C> f) {
    ModelField m;
    m.key = f.key, m.label = f.label, m.help = f.help;
    m.type = f.type;
    m.min = f.min, m.max = f.max, m.step = f.step;
    m.range = f.range;
    m.zeroText = f.zeroText;
    m.floatStorage = f.floatStorage;
    m.choices = f.choices;
    m.get = [g = f.get](const ModelConfig& c) { return g(c.as<C>()); };
    m.set = [s = f.set](ModelConfig& c, const FieldValue& v) { s(c.as<C>(), v); };
    if (f.check)
        m.check = [k = f.check](const ModelConfig& c) { return k(c.as<C>()); };
    if (f.applies)
        m.applies = [a = f.applies](const ModelConfig& c) { return a(c.as<C>()); };
    return m;
}

// A kind's field table as fields of ModelConfig.
template <typename C> std::vector<ModelField> modelFields(const FieldTable<C>& table) {
    std::vector<ModelField> out;
    for (const auto& f : table)
        out.push_back(modelField(f));
    return out;
}

// Every field of a model of `kind`, in the panel's order: its name and kind, the kind's own fields, its
// learning rate and weight decay. The kind field's choices are every kind; setting it switches the
// model to that kind's defaults, keeping its name and optimiser settings.
std::vector<ModelField> modelFieldsOf(const ModelKindInfo& kind);
// The fields every model has, at the top (name, kind) and at the bottom (learningRate, weightDecay).
const std::vector<ModelField>& commonModelFields();

} // namespace ndr

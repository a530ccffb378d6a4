// JSON forms of the configuration. Reading is strict: every field is checked for presence and type,
// and errors carry the field's path ("models[1].heads: expected an integer, got string"); ranges are
// checked by validate().
#include "json_fields.h"

namespace ndr {

namespace jsonio {

// --- Readers with paths ---

void readTask(const json& j, TaskConfig& c, const std::string& path, bool required) {
    const Fields f(j, path, required);
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
}

void readModel(const json& j, ModelConfig& c, const std::string& path, bool required) {
    const Fields f(j, path, required);
    f.read("name", c.name);
    f.readEnum("attention", c.attention, kAttentions);
    f.readEnum("update", c.update, kUpdates);
    f.readEnum("positional", c.positional, kPositionals);
    f.readEnum("geomNorm", c.geomNorm, kGeomNorms);
    f.read("sharedWeights", c.sharedWeights);
    f.read("dModel", c.dModel);
    f.read("heads", c.heads);
    f.read("dFF", c.dFF);
    f.read("steps", c.steps);
    f.read("evalSteps", c.evalSteps);
    f.read("dropout", c.dropout);
    f.read("attentionDropout", c.attentionDropout);
    f.read("gateDropout", c.gateDropout);
    f.read("gateBiasInit", c.gateBiasInit);
    // Added after format version 1 was first written: optional, 0 (the run's rate) when absent.
    if (j.is_object() && j.contains("learningRate"))
        f.read("learningRate", c.learningRate);
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
    j = json{{"symbols", c.symbols},
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
}
void from_json(const json& j, TaskConfig& c) {
    readTask(j, c, "", true);
}

void to_json(json& j, const ModelConfig& c) {
    j = json{{"name", c.name},
             {"attention", enumName(c.attention, kAttentions)},
             {"update", enumName(c.update, kUpdates)},
             {"positional", enumName(c.positional, kPositionals)},
             {"geomNorm", enumName(c.geomNorm, kGeomNorms)},
             {"sharedWeights", c.sharedWeights},
             {"dModel", c.dModel},
             {"heads", c.heads},
             {"dFF", c.dFF},
             {"steps", c.steps},
             {"evalSteps", c.evalSteps},
             {"dropout", floatJson(c.dropout)},
             {"attentionDropout", floatJson(c.attentionDropout)},
             {"gateDropout", floatJson(c.gateDropout)},
             {"gateBiasInit", floatJson(c.gateBiasInit)},
             {"learningRate", c.learningRate}};
}
void from_json(const json& j, ModelConfig& c) {
    readModel(j, c, "", true);
}

void to_json(json& j, const TrainConfig& c) {
    j = json{{"batchSize", c.batchSize},
             {"learningRate", doubleJson(c.learningRate)},
             {"weightDecay", doubleJson(c.weightDecay)},
             {"gradClip", doubleJson(c.gradClip)},
             {"steps", c.steps},
             {"evalInterval", c.evalInterval},
             {"seed", c.seed},
             {"threads", c.threads}};
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
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        // nlohmann's message starts with an internal id ("[json.exception.parse_error.101] ").
        std::string what = e.what();
        if (const size_t cut = what.find("] ");
            what.rfind("[json.exception", 0) == 0 && cut != std::string::npos)
            what.erase(0, cut + 2);
        throw std::runtime_error("invalid JSON at byte " + std::to_string(e.byte) + ": " + what);
    }
}

// "models" of a preset-based config: replaces the preset's list. An entry starts from the model preset
// it names ("ndr" sized like the preset's first model, "vanilla" like its second), else from the
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
            const ModelConfig& sizes = base.at(name == "vanilla" && base.size() > 1 ? 1 : 0);
            if (name == "ndr")
                m = ndrModel(sizes.dModel, sizes.heads, sizes.dFF, sizes.steps);
            else if (name == "vanilla")
                m = vanillaModel(sizes.dModel, sizes.heads, sizes.dFF, sizes.steps);
            else
                fail(field(path, "preset"), "unknown model preset '" + name + "'; expected ndr or vanilla");
            readModel(j[i], m, path, false);
        } else if (i < base.size()) {
            m = base[i];
            readModel(j[i], m, path, false);
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
    const std::vector<std::string> problems = validate(c);
    if (!problems.empty()) {
        std::string message;
        for (const std::string& p : problems)
            message += (message.empty() ? "" : "\n") + p;
        throw std::runtime_error(message);
    }
    return c;
}

} // namespace ndr

// JSON forms of the configuration. Reading is strict: every field is checked for presence and type,
// and errors carry the field's path ("models[1].heads: expected an integer, got string"); ranges are
// checked by validate().
#include "core/io/json_fields.h"

#include <cctype>

namespace ndr {

namespace jsonio {

// --- Readers with paths ---

void readTask(const json& j, TaskConfig& c, const std::string& path, bool required) {
    const Fields f(j, path, required);
    // Added with the arithmetic and ListOps tasks: optional, absent means compositional table lookup.
    f.readEnumOptional("kind", c.kind, kTaskKinds);
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
    f.readOptional("learningRate", c.learningRate);
    // Added with the LSTM, also optional: absent, a model is an encoder with the run's weight decay.
    f.readEnumOptional("kind", c.kind, kModelKinds);
    f.readOptional("weightDecay", c.weightDecay);
    f.readOptional("lstmHidden", c.lstmHidden);
    f.readOptional("lstmEmbedding", c.lstmEmbedding);
    // Added with ThoughtNet: absent, the defaults (a file without them holds no ThoughtNet).
    f.readOptional("operators", c.operators);
    f.readOptional("positionDims", c.positionDims);
    // Added with head routing and thought cost (run format 2): absent, both are off.
    f.readOptional("headRouting", c.headRouting);
    f.readOptional("routeTopK", c.routeTopK);
    f.readEnumOptional("routeDropped", c.routeDropped, kDroppedHeads);
    f.readOptional("routeEntropy", c.routeEntropy);
    f.readOptional("thoughtCost", c.thoughtCost);
    f.readOptional("haltThreshold", c.haltThreshold);
    // Added with halting by the change per step: absent, halting reads the gates.
    f.readEnumOptional("haltOn", c.haltOn, kHaltSignals);
    // Added with the choice of readout column: absent, the answer is read at [E].
    f.readEnumOptional("readout", c.readout, kReadoutColumns);
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
    // Added with early stopping: optional, absent means training for every step.
    f.readOptional("stopPatience", c.stopPatience);
    f.readOptional("stopIid", c.stopIid);
    // Added with the learning-rate decay: absent means a constant rate.
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
    j = json{{"kind", enumName(c.kind, kTaskKinds)},
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
    if (c.kind == TaskKind::ListOps)
        j["operations"] = c.operations;
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
             {"learningRate", c.learningRate},
             {"kind", enumName(c.kind, kModelKinds)},
             {"weightDecay", c.weightDecay},
             {"lstmHidden", c.lstmHidden},
             {"lstmEmbedding", c.lstmEmbedding},
             {"operators", c.operators},
             {"positionDims", c.positionDims},
             {"headRouting", c.headRouting},
             {"routeTopK", c.routeTopK},
             {"routeDropped", enumName(c.routeDropped, kDroppedHeads)},
             {"routeEntropy", c.routeEntropy},
             {"thoughtCost", c.thoughtCost},
             {"haltThreshold", c.haltThreshold},
             {"haltOn", enumName(c.haltOn, kHaltSignals)},
             {"readout", enumName(c.readout, kReadoutColumns)}};
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
        TaskConfig every; // ListOps' section is written with every task field
        every.kind = TaskKind::ListOps;
        unknownFields(*task, "task", keysOf(json(every)), problems);
    }
    if (const json* train = find(j, "train"))
        unknownFields(*train, "train", keysOf(json(TrainConfig{})), problems);
    if (const json* models = find(j, "models"); models && models->is_array()) {
        std::vector<std::string> known = keysOf(json(ModelConfig{}));
        known.push_back("preset");
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
// it names, else from the preset's model at the same index; its fields override. A model preset is
// "lstm" (the paper's LSTM), "thoughtnet" (sized like the preset's first model), "vanilla" (the
// "transformer" row) or a Table 1 row: the gated rows ("ndr",
// "rel-gate", "absrel-gate") are sized like the preset's first model (its NDR), the others like its
// second (its Transformer), as the authors' sweeps size them. Beyond the preset's list an entry without
// a model preset must give every field.
std::vector<ModelConfig> readModelOverrides(const json& j, const std::vector<ModelConfig>& base) {
    expectArray(j, "models");
    std::vector<ModelConfig> models(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string path = item("models", i);
        expectObject(j[i], path);
        ModelConfig& m = models[i];
        if (const json* preset = find(j[i], "preset")) {
            const std::string name = toString(*preset, field(path, "preset"));
            const std::string row = name == "vanilla" ? "transformer" : name;
            const std::vector<std::string> rows = tableOneRows();
            if (name == "lstm") {
                m = lstmModel();
            } else if (name == "thoughtnet") {
                const ModelConfig& sizes = base.at(0);
                m = thoughtNetModel(sizes.dModel, sizes.heads, sizes.dFF, 4, sizes.steps);
            } else if (std::find(rows.begin(), rows.end(), row) == rows.end()) {
                std::string known;
                for (const std::string& r : rows)
                    known += (known.empty() ? "" : ", ") + r;
                fail(field(path, "preset"), "unknown model preset '" + name +
                                                "'; expected vanilla, lstm, thoughtnet or a Table 1 row (" +
                                                known + ")");
            } else {
                const bool gated = copyGated(tableOneModel(row, 1, 1, 1, 1).update);
                const ModelConfig& sizes = base.at(!gated && base.size() > 1 ? 1 : 0);
                m = tableOneModel(row, sizes.dModel, sizes.heads, sizes.dFF, sizes.steps);
            }
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

// Built-in presets and the validation of a run configuration: every problem found at once, each naming
// the field it is about, so a config file or the experiment panel can point at what to fix.
#include "core/config/config.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace ndr {

namespace {

// Depth 40 is already far beyond what a few dozen steps can route; the bound keeps evaluation sets
// (one per depth) and input lengths small.
constexpr int kMaxDepth = 40;

// The thought cost's urgency in the stub-thought-cost preset.
constexpr double kStubUrgency = 0.01;

// --- Presets: each keeps all of its numbers here, in one place, so tuning touches one function. ---

RunConfig stubPreset() {
    RunConfig c;
    c.preset = "stub";
    c.task.symbols = 4;
    c.task.functions = 4;
    c.task.trainMinDepth = 1, c.task.trainMaxDepth = 4;
    c.task.validMinDepth = 1, c.task.validMaxDepth = 0; // no validation split
    c.task.testMinDepth = 5, c.task.testMaxDepth = 7;
    c.task.order = Order::Forward;
    c.task.seed = 1;
    c.task.evalExamplesPerDepth = 1000;
    // NDR: dropout 0.5 as the paper's gated models, and 10 evaluation steps so that depth 7 (which
    // needs 8 steps) has slack. How these and the step count were chosen: docs/results.md.
    ModelConfig ndr = ndrModel(48, 4, 96, 8);
    ndr.dropout = 0.5f;
    ndr.evalSteps = 10;
    // The Transformer at d 48, d_ff 96 fitted depths 1-4 (>= 0.99 each) on three seeds of five within
    // 6000 steps; at d 64, d_ff 128 every measured seed does (docs/results.md).
    c.models = {ndr, vanillaModel(64, 4, 128, 8)};
    c.train.batchSize = 64;
    c.train.learningRate = 1e-3;
    c.train.weightDecay = 0.01;
    c.train.gradClip = 5.0;
    c.train.steps = 6000;
    c.train.evalInterval = 500;
    c.train.seed = 1;
    c.train.threads = 1;
    return c;
}

// The stub with head routing: NDR and the Transformer each with and without top-2-of-4 routing, so one
// run shows what routing changes for both (docs/design.md §2, head routing).
RunConfig stubRoutingPreset() {
    RunConfig c = stubPreset();
    c.preset = "stub-routing";
    const ModelConfig ndr = c.models[0], vanilla = c.models[1];
    auto routed = [](ModelConfig m) {
        m.name += " top-2";
        m.headRouting = true;
        m.routeTopK = 2;
        m.routeEntropy = 0.01;
        return m;
    };
    c.models = {ndr, routed(ndr), vanilla, routed(vanilla)};
    return c;
}

// The stub's NDR with and without the thought cost, both halting at evaluation once every gate is
// below the threshold (docs/design.md §3, thought cost); the urgency was chosen in docs/results.md.
RunConfig stubThoughtCostPreset() {
    RunConfig c = stubPreset();
    c.preset = "stub-thought-cost";
    ModelConfig plain = c.models[0];
    plain.haltThreshold = 0.1;
    ModelConfig costed = plain;
    costed.name += " thought cost";
    costed.thoughtCost = kStubUrgency;
    c.models = {plain, costed};
    return c;
}

RunConfig paperPreset(const char* name, Order order) {
    RunConfig c;
    c.preset = name;
    c.task.symbols = 8;
    c.task.functions = 9;
    c.task.trainMinDepth = 1, c.task.trainMaxDepth = 5;
    c.task.validMinDepth = 6, c.task.validMaxDepth = 8;
    c.task.testMinDepth = 9, c.task.testMaxDepth = 10;
    c.task.order = order;
    c.task.seed = 1;
    c.task.evalExamplesPerDepth = 1000;
    // Laptop-sized version of the paper's NDR (d 256, H 1, d_ff 512, 14 steps, batch 512): the 14 steps
    // and the dropouts (0.5 / 0.1 / 0.1) are the paper's; d 64, H 4, d_ff 128, batch 128 and lr 1e-3 make
    // a run of both models take minutes on 2 cores (docs/results.md).
    ModelConfig ndr = ndrModel(64, 4, 128, 14);
    ndr.dropout = 0.5f;
    // The Transformer at the paper's width (d 128, H 4, d_ff 256; its dropout 0.1, no attention
    // dropout), 6 steps and lr 1e-3 fits every training depth (IID >= 0.99) between steps 5000 and
    // 10000 on the measured seeds; at d 64 its IID was 0.73-0.78 at step 12000. A step costs about as
    // much as the NDR's (docs/results.md).
    ModelConfig vanilla = vanillaModel(128, 4, 256, 6);
    vanilla.learningRate = 1e-3;
    c.models = {ndr, vanilla};
    c.train.batchSize = 128;
    c.train.learningRate = 1e-3;
    c.train.weightDecay = 0.01;
    c.train.gradClip = 5.0;
    c.train.steps = 12000;
    c.train.evalInterval = 500;
    c.train.seed = 1;
    c.train.threads = 1;
    if (order == Order::Backward) {
        // Backward order is harder: the [E] column must read the column of the last function applied,
        // at the far end, and training sits on a plateau until that read is found, at a step that
        // varies from seed to seed. One head (the paper's), a smaller dropout, a larger rate and 10
        // training steps (14 at evaluation, as shared weights allow; each step is cheaper) get every
        // measured seed past it within 32000 steps (docs/results.md).
        c.models[0].heads = 1;
        c.models[0].steps = 10;
        c.models[0].evalSteps = 14;
        c.models[0].dropout = 0.1f;
        // The Transformer stays at d 64 here: at d 128 its 32000 steps would take longer than the NDR's.
        c.models[1] = vanillaModel(64, 4, 128, 6);
        c.models[1].learningRate = 5e-4;
        c.train.batchSize = 64;
        c.train.learningRate = 2e-3;
        c.train.steps = 32000;
        c.train.evalInterval = 1000;
    }
    return c;
}

// --- Validation helpers: each appends "<field>: <what>" to the list. ---

std::string num(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
}

class Problems {
public:
    void add(const std::string& field, const std::string& what) { list_.push_back(field + ": " + what); }

    void intRange(const std::string& field, long long v, long long lo, long long hi) {
        if (v < lo || v > hi)
            add(field, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                           std::to_string(v));
    }
    void atLeast(const std::string& field, long long v, long long lo) {
        if (v < lo)
            add(field, "must be at least " + std::to_string(lo) + ", got " + std::to_string(v));
    }
    // Returns false (after reporting) when v is NaN or infinite, so callers skip range checks.
    bool finite(const std::string& field, double v) {
        if (std::isfinite(v))
            return true;
        add(field, "must be a finite number, got " + num(v));
        return false;
    }
    // Dropout probabilities: 1 would drop everything.
    void probability(const std::string& field, double v) {
        if (finite(field, v) && (v < 0 || v >= 1))
            add(field, "must be at least 0 and below 1, got " + num(v));
    }

    std::vector<std::string> take() { return std::move(list_); }

private:
    std::vector<std::string> list_;
};

struct DepthRange {
    const char* field; // prefix of the TaskConfig fields
    const char* name;  // for messages
    int lo, hi;
    bool optional; // may be empty (lo > hi)
    bool empty() const { return lo > hi; }
};

void validateTask(const TaskConfig& t, Problems& p) {
    p.intRange("task.symbols", t.symbols, 2, 64);
    p.intRange("task.functions", t.functions, 1, 26);
    p.intRange("task.evalExamplesPerDepth", t.evalExamplesPerDepth, 1, 100000);

    const DepthRange ranges[] = {{"train", "train", t.trainMinDepth, t.trainMaxDepth, false},
                                 {"valid", "validation", t.validMinDepth, t.validMaxDepth, true},
                                 {"test", "test", t.testMinDepth, t.testMaxDepth, false}};
    bool rangesOk = true;
    for (const DepthRange& r : ranges) {
        const std::string minField = std::string("task.") + r.field + "MinDepth";
        const std::string maxField = std::string("task.") + r.field + "MaxDepth";
        if (r.optional && r.empty())
            continue;
        if (r.lo < 1) {
            p.atLeast(minField, r.lo, 1);
            rangesOk = false;
        }
        if (r.empty()) {
            p.add(maxField, "must be at least " + minField + " (" + std::to_string(r.lo) + "), got " +
                                std::to_string(r.hi) + "; the " + r.name + " split needs at least one depth");
            rangesOk = false;
        }
        if (r.hi > kMaxDepth) {
            p.add(maxField, "must be at most " + std::to_string(kMaxDepth) + ", got " + std::to_string(r.hi));
            rangesOk = false;
        }
    }
    if (!rangesOk)
        return; // overlap messages about ranges already reported as broken would only add noise
    for (int i = 0; i < 3; ++i)
        for (int j = i + 1; j < 3; ++j) {
            const DepthRange &a = ranges[i], &b = ranges[j];
            if (a.empty() || b.empty() || a.hi < b.lo || b.hi < a.lo)
                continue;
            p.add(std::string("task.") + b.field + "MinDepth",
                  std::string(b.name) + " depths " + std::to_string(b.lo) + ".." + std::to_string(b.hi) +
                      " overlap " + a.name + " depths " + std::to_string(a.lo) + ".." + std::to_string(a.hi) +
                      "; each depth belongs to one split");
        }
}

// A model's own optimiser settings, which every kind has.
void validateRates(const ModelConfig& m, const std::string& at, Problems& p) {
    if (p.finite(at + ".learningRate", m.learningRate) && (m.learningRate < 0 || m.learningRate > 1))
        p.add(at + ".learningRate", "must be 0 (the run's rate) or in (0, 1], got " + num(m.learningRate));
    if (p.finite(at + ".weightDecay", m.weightDecay) && m.weightDecay != -1 &&
        (m.weightDecay < 0 || m.weightDecay > 1))
        p.add(at + ".weightDecay",
              "must be -1 (the run's weight decay) or between 0 and 1, got " + num(m.weightDecay));
}

// Only the fields an LSTM reads: the encoder's switches do not apply and are not checked.
void validateLstm(const ModelConfig& m, const std::string& at, Problems& p) {
    p.intRange(at + ".lstmHidden", m.lstmHidden, 1, 4096);
    p.intRange(at + ".lstmEmbedding", m.lstmEmbedding, 1, 4096);
    p.probability(at + ".dropout", m.dropout);
    validateRates(m, at, p);
    if (m.headRouting)
        p.add(at + ".headRouting", "routes attention heads; an LSTM has none: set it to false");
    if (m.thoughtCost != 0)
        p.add(at + ".thoughtCost", "charges copy-gate openness; an LSTM has no copy gate: set it to 0");
    if (m.haltThreshold != 0)
        p.add(at + ".haltThreshold", "halts on copy gates; an LSTM has no copy gate: set it to 0");
}

// Head routing, thought cost and gate halting on an encoder.
void validateRouting(const ModelConfig& m, const std::string& at, Problems& p) {
    if (m.headRouting && (m.routeTopK < 0 || (m.heads >= 1 && m.routeTopK > m.heads)))
        p.add(at + ".routeTopK", "must be 0 (every head) or between 1 and heads (" + std::to_string(m.heads) +
                                     "), got " + std::to_string(m.routeTopK));
    if (p.finite(at + ".routeEntropy", m.routeEntropy) && (m.routeEntropy < -10 || m.routeEntropy > 10))
        p.add(at + ".routeEntropy", "must be between -10 and 10, got " + num(m.routeEntropy));
    if (p.finite(at + ".thoughtCost", m.thoughtCost)) {
        if (m.thoughtCost < 0 || m.thoughtCost > 10)
            p.add(at + ".thoughtCost", "must be between 0 and 10, got " + num(m.thoughtCost));
        else if (m.thoughtCost > 0 && !copyGated(m.update))
            p.add(at + ".thoughtCost", "charges copy-gate openness and needs a copy-gated update, got a "
                                       "residual one: set it to 0");
    }
    if (p.finite(at + ".haltThreshold", m.haltThreshold)) {
        if (m.haltThreshold < 0 || m.haltThreshold >= 1)
            p.add(at + ".haltThreshold", "must be 0 (no halting) or in (0, 1), got " + num(m.haltThreshold));
        else if (m.haltThreshold > 0 && !copyGated(m.update))
            p.add(at + ".haltThreshold", "halts on copy gates and needs a copy-gated update, got a residual "
                                         "one: set it to 0");
    }
}

void validateModel(const ModelConfig& m, const std::string& at, Problems& p) {
    if (m.name.empty())
        p.add(at + ".name", "must not be empty");
    if (m.kind == ModelKind::Lstm) {
        validateLstm(m, at, p);
        return;
    }
    p.intRange(at + ".dModel", m.dModel, 1, 4096);
    if (m.heads < 1)
        p.atLeast(at + ".heads", m.heads, 1);
    else if (m.dModel >= 1 && m.dModel % m.heads != 0)
        p.add(at + ".heads",
              std::to_string(m.heads) + " does not divide d_model " + std::to_string(m.dModel));
    p.intRange(at + ".dFF", m.dFF, 1, 16384);
    p.intRange(at + ".steps", m.steps, 1, 64);
    if (m.evalSteps != 0) {
        if (!m.sharedWeights && m.evalSteps != m.steps)
            p.add(at + ".evalSteps", "must be 0 or equal to steps (" + std::to_string(m.steps) +
                                         ") without shared weights: separate layers cannot be unrolled "
                                         "further, got " +
                                         std::to_string(m.evalSteps));
        else if (m.evalSteps < m.steps || m.evalSteps > 128)
            p.add(at + ".evalSteps", "must be 0 (same as steps) or between steps (" +
                                         std::to_string(m.steps) + ") and 128, got " +
                                         std::to_string(m.evalSteps));
    }
    p.probability(at + ".dropout", m.dropout);
    p.probability(at + ".attentionDropout", m.attentionDropout);
    p.probability(at + ".gateDropout", m.gateDropout);
    p.finite(at + ".gateBiasInit", m.gateBiasInit);
    validateRates(m, at, p);
    validateRouting(m, at, p);
    if (m.geomNorm == GeomNorm::L1 && m.attention != AttentionKind::Geometric)
        p.add(at + ".geomNorm", "l1 normalisation needs geometric attention; set it to off for softmax");
    if (relativePositions(m.positional) && m.attention == AttentionKind::Geometric)
        p.add(at + ".positional",
              "relative positions are part of softmax attention's scores; geometric attention "
              "has its own directional encoding: use softmax attention, or positional none");
}

void validateTrain(const TrainConfig& t, Problems& p) {
    p.intRange("train.batchSize", t.batchSize, 1, 8192);
    if (p.finite("train.learningRate", t.learningRate) && (t.learningRate <= 0 || t.learningRate > 1))
        p.add("train.learningRate", "must be above 0 and at most 1, got " + num(t.learningRate));
    if (p.finite("train.weightDecay", t.weightDecay) && (t.weightDecay < 0 || t.weightDecay > 1))
        p.add("train.weightDecay", "must be between 0 and 1, got " + num(t.weightDecay));
    if (p.finite("train.gradClip", t.gradClip) && t.gradClip < 0)
        p.add("train.gradClip", "must be at least 0 (0 disables clipping), got " + num(t.gradClip));
    p.intRange("train.steps", t.steps, 1, 10000000);
    p.atLeast("train.evalInterval", t.evalInterval, 1);
    p.intRange("train.threads", t.threads, 1, 64);
    p.atLeast("train.stopPatience", t.stopPatience, 0);
    if (p.finite("train.stopIid", t.stopIid) && (t.stopIid < 0 || t.stopIid > 1))
        p.add("train.stopIid", "must be between 0 and 1, got " + num(t.stopIid));
}

} // namespace

namespace {
// The fields both built-in models share; ModelConfig's defaults are the NDR switches.
ModelConfig sizedModel(const char* name, int dModel, int heads, int dFF, int steps) {
    ModelConfig m;
    m.name = name;
    m.dModel = dModel, m.heads = heads, m.dFF = dFF, m.steps = steps;
    m.evalSteps = 0;
    m.sharedWeights = true;
    m.geomNorm = GeomNorm::Off;
    m.dropout = 0.1f;
    m.attentionDropout = 0.1f;
    m.gateBiasInit = -3.0f;
    return m;
}
} // namespace

ModelConfig ndrModel(int dModel, int heads, int dFF, int steps) {
    ModelConfig m = sizedModel("NDR", dModel, heads, dFF, steps);
    m.attention = AttentionKind::Geometric;
    m.update = UpdateKind::CopyGate;
    m.positional = PositionalKind::None;
    m.gateDropout = 0.1f;
    return m;
}

ModelConfig vanillaModel(int dModel, int heads, int dFF, int steps) {
    ModelConfig m = sizedModel("Transformer", dModel, heads, dFF, steps);
    m.attention = AttentionKind::Softmax;
    m.update = UpdateKind::Residual;
    m.positional = PositionalKind::Sinusoidal;
    m.attentionDropout = 0.0f; // the authors' Transformer applies none
    m.gateDropout = 0.0f;      // no gate in a residual layer
    return m;
}

namespace {

// One row of the paper's Table 1: the switches that make it (docs/design.md §4).
struct TableOneRow {
    const char* row;   // the name config files and the panel use
    const char* label; // the model's name, as the paper's table writes the row
    AttentionKind attention;
    UpdateKind update;
    PositionalKind positional;
};

// The LSTM row is not an encoder configuration: lstmModel() makes it.
constexpr TableOneRow kTableOne[] = {
    {"transformer", "Transformer", AttentionKind::Softmax, UpdateKind::Residual, PositionalKind::Sinusoidal},
    {"rel", "+rel", AttentionKind::Softmax, UpdateKind::Residual, PositionalKind::Relative},
    {"rel-gate", "+rel+gate", AttentionKind::Softmax, UpdateKind::CopyGateTanh, PositionalKind::Relative},
    {"absrel-gate", "+abs/rel+gate", AttentionKind::Softmax, UpdateKind::CopyGateTanh,
     PositionalKind::AbsRel},
    {"geom", "+geom", AttentionKind::Geometric, UpdateKind::Residual, PositionalKind::None},
    {"ndr", "NDR", AttentionKind::Geometric, UpdateKind::CopyGate, PositionalKind::None},
};

} // namespace

std::vector<std::string> tableOneRows() {
    std::vector<std::string> rows;
    for (const TableOneRow& r : kTableOne)
        rows.push_back(r.row);
    return rows;
}

ModelConfig tableOneModel(const std::string& row, int dModel, int heads, int dFF, int steps) {
    for (const TableOneRow& r : kTableOne) {
        if (row != r.row)
            continue;
        // The gated rows start from NDR (gate dropout), the others from the Transformer (none).
        ModelConfig m = copyGated(r.update) ? ndrModel(dModel, heads, dFF, steps)
                                            : vanillaModel(dModel, heads, dFF, steps);
        m.name = r.label;
        m.attention = r.attention;
        m.update = r.update;
        m.positional = r.positional;
        return m;
    }
    std::string known;
    for (const std::string& n : tableOneRows())
        known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown Table 1 row '" + row + "': known rows are " + known);
}

std::string tableOneRowOf(const ModelConfig& m) {
    if (m.kind == ModelKind::Lstm)
        return "lstm";
    for (const TableOneRow& r : kTableOne)
        if (m.attention == r.attention && m.update == r.update && m.positional == r.positional)
            return r.row;
    return "";
}

ModelConfig lstmModel(int hidden, int embedding) {
    ModelConfig m;
    m.name = "LSTM";
    m.kind = ModelKind::Lstm;
    m.lstmHidden = hidden;
    m.lstmEmbedding = embedding;
    m.dropout = 0.5f; // on the embeddings
    // The paper trains its LSTM with plain Adam: AdamW without weight decay, at its own rate whatever the
    // run's rate is.
    m.learningRate = 1e-3;
    m.weightDecay = 0;
    // The encoder's fields do not apply; they read as a model without gates or attention dropout for
    // code that asks any model whether it has copy gates.
    m.attention = AttentionKind::Softmax;
    m.update = UpdateKind::Residual;
    m.positional = PositionalKind::None;
    m.attentionDropout = 0;
    m.gateDropout = 0;
    return m;
}

std::vector<std::string> presetNames() {
    return {"stub", "stub-routing", "stub-thought-cost", "paper-forward", "paper-backward"};
}

RunConfig presetConfig(const std::string& name) {
    if (name == "stub")
        return stubPreset();
    if (name == "stub-routing")
        return stubRoutingPreset();
    if (name == "stub-thought-cost")
        return stubThoughtCostPreset();
    if (name == "paper-forward")
        return paperPreset("paper-forward", Order::Forward);
    if (name == "paper-backward")
        return paperPreset("paper-backward", Order::Backward);
    std::string known;
    for (const std::string& n : presetNames())
        known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown preset '" + name + "': known presets are " + known);
}

std::vector<std::string> validate(const TaskConfig& task) {
    Problems p;
    validateTask(task, p);
    return p.take();
}

std::vector<std::string> validate(const RunConfig& config) {
    Problems p;
    validateTask(config.task, p);
    if (config.models.empty() || config.models.size() > 4)
        p.add("models", "must list between 1 and 4 models, got " + std::to_string(config.models.size()));
    std::set<std::string> names;
    for (size_t i = 0; i < config.models.size(); ++i) {
        const ModelConfig& m = config.models[i];
        const std::string at = "models[" + std::to_string(i) + "]";
        validateModel(m, at, p);
        if (!m.name.empty() && !names.insert(m.name).second)
            p.add(at + ".name",
                  "'" + m.name + "' is already the name of another model; names must be unique");
    }
    validateTrain(config.train, p);
    return p.take();
}

} // namespace ndr

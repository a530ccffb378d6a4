// The validation of a run configuration: every problem found at once, each naming the field it is
// about, so a config file or the experiment panel can point at what to fix.
#include "core/config/config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace ndr {

namespace {

// Depth 40 is already far beyond what a few dozen steps can route; the bound keeps evaluation sets
// (one per depth) and input lengths small.
constexpr int kMaxDepth = 40;
// An arithmetic or ListOps expression has at most 50 tokens (docs/design.md §1): past depth 10 hardly
// one draw in a million fits, so evaluation sets could not be drawn. A lone digit (depth 1) is no question.
constexpr int kMinTreeDepth = 2, kMaxTreeDepth = 10;
// Multi-digit arithmetic's depths are its eight problem kinds (docs/design.md §1).
constexpr int kMultiDigitKinds = 8;

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

// ListOps' operation subset: at least one, each known and listed once. Other tasks have none to choose.
void validateOperations(const TaskConfig& t, Problems& p) {
    const std::vector<std::string>& known = listOpsOperationNames();
    if (t.kind != TaskKind::ListOps) {
        if (t.operations != known)
            p.add("task.operations", "chooses ListOps' operations; this task has none: leave it out");
        return;
    }
    if (t.operations.empty())
        p.add("task.operations", "must list at least one of MIN, MAX, MED, SM");
    for (size_t i = 0; i < t.operations.size(); ++i) {
        const std::string& op = t.operations[i];
        if (std::find(known.begin(), known.end(), op) == known.end())
            p.add("task.operations", "unknown operation '" + op + "'; expected MIN, MAX, MED or SM");
        else if (std::find(t.operations.begin(), t.operations.begin() + i, op) != t.operations.begin() + i)
            p.add("task.operations", "lists " + op + " twice");
    }
}

void validateTask(const TaskConfig& t, Problems& p) {
    const bool ctl = t.kind == TaskKind::Ctl;
    if (ctl) {
        p.intRange("task.symbols", t.symbols, 2, 64);
        p.intRange("task.functions", t.functions, 1, 26);
    }
    const bool digits = t.kind == TaskKind::MultiDigit;
    const int minDepth = ctl || digits ? 1 : kMinTreeDepth, maxDepth = ctl      ? kMaxDepth
                                                                       : digits ? kMultiDigitKinds
                                                                                : kMaxTreeDepth;
    p.intRange("task.evalExamplesPerDepth", t.evalExamplesPerDepth, 1, 100000);
    validateOperations(t, p);

    const DepthRange ranges[] = {{"train", "train", t.trainMinDepth, t.trainMaxDepth, false},
                                 {"valid", "validation", t.validMinDepth, t.validMaxDepth, true},
                                 {"test", "test", t.testMinDepth, t.testMaxDepth, false}};
    bool rangesOk = true;
    for (const DepthRange& r : ranges) {
        const std::string minField = std::string("task.") + r.field + "MinDepth";
        const std::string maxField = std::string("task.") + r.field + "MaxDepth";
        if (r.optional && r.empty())
            continue;
        if (r.lo < minDepth) {
            p.atLeast(minField, r.lo, minDepth);
            rangesOk = false;
        }
        if (r.empty()) {
            p.add(maxField, "must be at least " + minField + " (" + std::to_string(r.lo) + "), got " +
                                std::to_string(r.hi) + "; the " + r.name + " split needs at least one depth");
            rangesOk = false;
        }
        if (r.hi > maxDepth) {
            p.add(maxField, "must be at most " + std::to_string(maxDepth) + ", got " + std::to_string(r.hi));
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
        p.add(at + ".haltThreshold", "an LSTM reads its tokens one by one and has no step to halt after: "
                                     "set it to 0");
}

// Head routing, thought cost and halting on an encoder.
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
        else if (m.haltThreshold > 0 && !hasHaltSignal(m, m.haltOn))
            p.add(at + ".haltThreshold", "halts on copy gates and needs a copy-gated update, got a residual "
                                         "one: set it to 0, or halt on the change (haltOn \"change\")");
    }
}

// The sizes the encoder and ThoughtNet share: state width, heads, hidden width, steps.
void validateSizes(const ModelConfig& m, const std::string& at, Problems& p) {
    p.intRange(at + ".dModel", m.dModel, 1, 4096);
    if (m.heads < 1)
        p.atLeast(at + ".heads", m.heads, 1);
    else if (m.dModel >= 1 && m.dModel % m.heads != 0)
        p.add(at + ".heads",
              std::to_string(m.heads) + " does not divide d_model " + std::to_string(m.dModel));
    p.intRange(at + ".dFF", m.dFF, 1, 16384);
    p.intRange(at + ".steps", m.steps, 1, 64);
}

// ThoughtNet: its sizes, its urgency and its fixed-point threshold; the encoder's switches do not apply.
void validateThoughtNet(const ModelConfig& m, const std::string& at, Problems& p) {
    validateSizes(m, at, p);
    if (m.evalSteps != 0 && (m.evalSteps < m.steps || m.evalSteps > 128))
        p.add(at + ".evalSteps", "must be 0 (same as steps) or between steps (" + std::to_string(m.steps) +
                                     ") and 128, got " + std::to_string(m.evalSteps));
    p.intRange(at + ".operators", m.operators, 1, 16);
    p.intRange(at + ".positionDims", m.positionDims, 0, 256);
    if (m.positionDims % 2 != 0)
        p.add(at + ".positionDims",
              "must be even (sine and cosine pairs), got " + std::to_string(m.positionDims));
    p.probability(at + ".dropout", m.dropout);
    validateRates(m, at, p);
    if (m.headRouting)
        p.add(at + ".headRouting",
              "routes an encoder's heads; ThoughtNet selects operators: set it to false");
    if (p.finite(at + ".thoughtCost", m.thoughtCost) && (m.thoughtCost < 0 || m.thoughtCost > 10))
        p.add(at + ".thoughtCost", "must be between 0 and 10, got " + num(m.thoughtCost));
    if (p.finite(at + ".haltThreshold", m.haltThreshold) && (m.haltThreshold < 0 || m.haltThreshold >= 1))
        p.add(at + ".haltThreshold", "must be 0 (no halting) or in (0, 1), got " + num(m.haltThreshold));
}

void validateModel(const ModelConfig& m, const std::string& at, Problems& p) {
    if (m.name.empty())
        p.add(at + ".name", "must not be empty");
    if (m.kind != ModelKind::Encoder && m.readout != ReadoutColumn::Last)
        p.add(at + ".readout",
              std::string("'first' is for encoders; ") +
                  (m.kind == ModelKind::Lstm ? "the LSTM reads its state after the last token"
                                             : "ThoughtNet reads an answer digit at every "
                                               "position") +
                  ": set it to last");
    if (m.kind == ModelKind::Lstm) {
        validateLstm(m, at, p);
        return;
    }
    if (m.kind == ModelKind::ThoughtNet) {
        validateThoughtNet(m, at, p);
        return;
    }
    validateSizes(m, at, p);
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
    p.atLeast("train.lrDecaySteps", t.lrDecaySteps, 0);
    if (p.finite("train.lrDecayFactor", t.lrDecayFactor) && (t.lrDecayFactor <= 0 || t.lrDecayFactor > 1))
        p.add("train.lrDecayFactor", "must be above 0 and at most 1, got " + num(t.lrDecayFactor));
    p.intRange("train.warmupSteps", t.warmupSteps, 0, 10000000);
    if (t.cosineDecay && t.lrDecaySteps > 0)
        p.add("train.cosineDecay", "choose the cosine or the stepwise decay, not both (lrDecaySteps is " +
                                       std::to_string(t.lrDecaySteps) + ")");
    p.intRange("train.steps", t.steps, 1, 10000000);
    p.atLeast("train.evalInterval", t.evalInterval, 1);
    p.intRange("train.threads", t.threads, 1, 64);
    p.atLeast("train.stopPatience", t.stopPatience, 0);
    if (p.finite("train.stopIid", t.stopIid) && (t.stopIid < 0 || t.stopIid > 1))
        p.add("train.stopIid", "must be between 0 and 1, got " + num(t.stopIid));
}

} // namespace

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
        if (m.kind == ModelKind::Lstm && config.task.kind == TaskKind::MultiDigit)
            p.add(at + ".kind", "the LSTM reads one answer after the last token; multi-digit arithmetic "
                                "needs an answer digit at every position: use an encoder or ThoughtNet");
        if (m.kind == ModelKind::Encoder && m.readout == ReadoutColumn::First &&
            config.task.kind == TaskKind::MultiDigit)
            p.add(at + ".readout",
                  "multi-digit arithmetic reads answer digit k at position k; 'first' is for "
                  "tasks with one answer per example: set it to last");
        if (!m.name.empty() && !names.insert(m.name).second)
            p.add(at + ".name",
                  "'" + m.name + "' is already the name of another model; names must be unique");
    }
    validateTrain(config.train, p);
    return p.take();
}

} // namespace ndr

// The validation of a run configuration: every problem found at once, each naming the field it is
// about, so a config file or the experiment panel can point at what to fix.
#include "core/config/config.h"
#include "core/config/model_kind.h"
#include "core/config/task_kinds.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace ndr {

namespace {

std::string num(double x) {
    return numberText(x);
}

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
    if (!factsOf(t.kind).operations) {
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
    const TaskKindFacts& kind = factsOf(t.kind);
    if (kind.tables) {
        p.intRange("task.symbols", t.symbols, 2, 64);
        p.intRange("task.functions", t.functions, 1, 26);
    }
    const int minDepth = kind.minDepth, maxDepth = kind.maxDepth;
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

// A model: its name, every field of its kind (each from the kind's table), and the kind's rules.
void validateModel(const ModelConfig& m, const TaskConfig& task, const std::string& at, Problems& p) {
    if (m.name.empty())
        p.add(at + ".name", "must not be empty");
    const ModelKindInfo& kind = kindOf(m);
    for (const ModelField& f : modelFieldsOf(kind))
        if (f.key != "name" && f.key != "kind")
            f.validate(m, at + "." + f.key, p);
    kind.validate(m, task, at, p);
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

std::vector<Problem> validate(const TaskConfig& task) {
    Problems p;
    validateTask(task, p);
    return p.take();
}

std::vector<Problem> validate(const RunConfig& config) {
    Problems p;
    validateTask(config.task, p);
    if (config.models.empty() || config.models.size() > 4)
        p.add("models", "must list between 1 and 4 models, got " + std::to_string(config.models.size()));
    std::set<std::string> names;
    for (size_t i = 0; i < config.models.size(); ++i) {
        const ModelConfig& m = config.models[i];
        const std::string at = "models[" + std::to_string(i) + "]";
        validateModel(m, config.task, at, p);
        if (!m.name.empty() && !names.insert(m.name).second)
            p.add(at + ".name",
                  "'" + m.name + "' is already the name of another model; names must be unique");
    }
    validateTrain(config.train, p);
    return p.take();
}

} // namespace ndr

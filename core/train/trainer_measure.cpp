// Measuring a model: its accuracy on sets of examples, and the evaluation record of every depth with
// the routing, halting and per-operation figures (docs/design.md §3).
#include "core/train/trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace ndr {

namespace {

double mean(const std::vector<double>& xs) {
    if (xs.empty())
        return std::numeric_limits<double>::quiet_NaN();
    double s = 0;
    for (double x : xs)
        s += x;
    return s / double(xs.size());
}

} // namespace

std::pair<double, double> Trainer::accuracy(const std::vector<Example>& examples, int steps) {
    SetProgress p;
    measureSet(examples, steps, nullptr, p);
    const double n = double(std::max<size_t>(1, examples.size()));
    return {double(p.correct) / n, p.lossSum / n};
}

std::vector<char> Trainer::answeredRight(const std::vector<Example>& examples, int steps) {
    SetProgress p;
    measureSet(examples, steps, nullptr, p);
    return p.tally.right;
}

size_t Trainer::rightAnswers(const Batch& batch, std::vector<char>* each) const {
    // An example is right when every readout is (sequence accuracy).
    const auto& logits = model_.logits();
    const int R = batch.readouts;
    size_t correct = 0;
    for (int b = 0; b < batch.batch; ++b) {
        bool right = true;
        for (int k = 0; right && k < R; ++k) {
            Index arg;
            logits.row(Index(b) * R + k).maxCoeff(&arg);
            right = int(arg) == batch.targets[size_t(b) * R + k];
        }
        correct += right;
        if (each)
            each->push_back(char(right));
    }
    return correct;
}

bool Trainer::measureSet(const std::vector<Example>& examples, int steps, const std::atomic<bool>* stop,
                         SetProgress& p, const std::function<void(size_t)>& onPass) {
    setThreads();
    if (steps <= 0)
        steps = factsOf(model_.config()).evalSteps;
    // 128 examples at a time: their activations stay in a core's caches between the passes of a step,
    // and an evaluation gives way to `stop` sooner (docs/design.md §3).
    const size_t chunk = 128;
    RoutingTally& tally = p.tally;
    const std::string learned = factsOf(model_.config()).learnedHalting;
    Rng unused(0);
    for (size_t start = p.examples; start < examples.size(); start += chunk) {
        if (stop && stop->load(std::memory_order_relaxed))
            return false;
        const size_t end = std::min(examples.size(), start + chunk);
        const std::vector<Example> part(examples.begin() + start, examples.begin() + end);
        const Batch batch = task_.makeBatch(part);
        model_.forward(batch, steps, false, unused, false);
        const ForwardStats& st = model_.stats();
        p.lossSum += st.crossEntropy * double(part.size());
        const double w = double(part.size());
        tally.weight += w;
        tally.routeEntropy += st.routeEntropy * w;
        tally.headShare.resize(st.headShare.size(), 0.0);
        for (size_t h = 0; h < st.headShare.size(); ++h)
            tally.headShare[h] += st.headShare[h] * w;
        if (!st.haltSteps.empty()) {
            tally.haltCounts.resize(size_t(steps) + 1, 0);
            for (int s : st.haltSteps)
                ++tally.haltCounts[size_t(std::clamp(s, 0, steps))];
        }
        const size_t right = rightAnswers(batch, &tally.right);
        p.correct += right;
        // A halting model is run again for every step, to tell what halting costs; when no example
        // stopped early the answers are those already counted. A model whose halting is learned has
        // no such run.
        if (!st.haltSteps.empty() && learned.empty()) {
            if (std::any_of(st.haltSteps.begin(), st.haltSteps.end(), [&](int s) { return s < steps; })) {
                const ModelFacts halting = factsOf(model_.config());
                const double threshold = halting.haltThreshold;
                const HaltSignal on = halting.haltOn;
                model_.setHalting(0, on);
                model_.forward(batch, steps, false, unused, false);
                model_.setHalting(threshold, on);
                tally.everyStepCorrect += double(rightAnswers(batch));
            } else {
                tally.everyStepCorrect += double(right);
            }
        }
        p.examples = end;
        if (onPass)
            onPass(end);
    }
    return true;
}

EvalRecord Trainer::evaluate() {
    return *evaluateUnless(nullptr);
}

EvalRecord Trainer::measure(int steps) {
    MeasureProgress progress;
    return *measureUnless(steps, nullptr, nullptr, progress);
}

EvalRecord Trainer::measureOn(const DepthSets& sets, int steps) {
    MeasureProgress progress;
    return *measureUnless(steps, nullptr, &sets, progress);
}

std::optional<EvalRecord> Trainer::measureUnless(int steps, const std::atomic<bool>* stop,
                                                 const DepthSets* sets, MeasureProgress& m,
                                                 const PassFn& onPass) {
    EvalRecord& r = m.record;
    const std::vector<int> depths = task_.allDepths();
    const size_t n = sets ? sets->size() : depths.size();
    for (; m.depth < n; ++m.depth) {
        const size_t i = m.depth;
        const int d = sets ? (*sets)[i].first : depths[i];
        const std::vector<Example>* drawn = sets ? &(*sets)[i].second : task_.evalSetUnless(d, stop);
        if (!drawn)
            return std::nullopt;
        const std::vector<Example>& set = *drawn;
        const auto passDone = [&](size_t examples) {
            if (onPass)
                onPass((double(i) + double(examples) / double(std::max<size_t>(1, set.size()))) / double(n));
        };
        if (!measureSet(set, steps, stop, m.set, passDone))
            return std::nullopt;
        const SetProgress p = std::exchange(m.set, {});
        const RoutingTally& tally = p.tally;
        m.all.weight += tally.weight;
        m.all.routeEntropy += tally.routeEntropy;
        m.all.headShare.resize(tally.headShare.size(), 0.0);
        for (size_t h = 0; h < tally.headShare.size(); ++h)
            m.all.headShare[h] += tally.headShare[h];
        const double examples = double(std::max<size_t>(1, set.size()));
        if (!tally.haltCounts.empty()) {
            r.haltCounts.push_back(tally.haltCounts);
            if (factsOf(model_.config()).learnedHalting.empty())
                r.everyStepAccuracy.push_back(tally.everyStepCorrect / examples);
        }
        const double acc = double(p.correct) / examples;
        r.depths.push_back(d);
        r.accuracy.push_back(acc);
        r.loss.push_back(p.lossSum / examples);
        r.baseline.push_back(majorityBaseline(task_, set).accuracy);
        // Each example's root operation, and whether it was answered right: (examples, right)
        std::map<std::string, std::pair<int, int>>& ops = m.byOperation.emplace_back();
        for (size_t e = 0; e < set.size(); ++e)
            if (const std::string op = task_.rootOperation(set[e]); !op.empty()) {
                ++ops[op].first;
                ops[op].second += e < tally.right.size() && tally.right[e];
            }
        switch (task_.splitOf(d)) {
        case Split::Train:
            m.train.push_back(acc);
            break;
        case Split::Valid:
            m.valid.push_back(acc);
            break;
        case Split::Test:
            m.test.push_back(acc);
            break;
        case Split::None:
            break;
        }
    }
    // Every operation of any depth, in name order, with a column in every depth's row.
    std::set<std::string> names;
    for (const auto& ops : m.byOperation)
        for (const auto& [op, counts] : ops)
            names.insert(op);
    r.operations.assign(names.begin(), names.end());
    if (!names.empty())
        for (const auto& ops : m.byOperation) {
            auto& examples = r.operationExamples.emplace_back(names.size(), 0);
            auto& correct = r.operationCorrect.emplace_back(names.size(), 0);
            for (size_t o = 0; o < r.operations.size(); ++o)
                if (const auto it = ops.find(r.operations[o]); it != ops.end()) {
                    examples[o] = it->second.first;
                    correct[o] = it->second.second;
                }
        }
    r.trainAccuracy = mean(m.train);
    r.validAccuracy = mean(m.valid);
    r.testAccuracy = mean(m.test);
    if (!m.all.headShare.empty() && m.all.weight > 0) {
        r.routeEntropy = m.all.routeEntropy / m.all.weight;
        for (double& share : m.all.headShare)
            share /= m.all.weight;
        r.headShare = m.all.headShare;
    }
    return std::move(r);
}

std::optional<EvalRecord> Trainer::evaluateUnless(const std::atomic<bool>* stop, const PassFn& onPass) {
    if (!evalProgress_)
        evalProgress_ = std::make_unique<MeasureProgress>();
    std::optional<EvalRecord> measured = measureUnless(0, stop, nullptr, *evalProgress_, onPass);
    if (!measured)
        return std::nullopt;
    evalProgress_.reset();
    EvalRecord& r = *measured;
    r.step = record_.stepsDone;
    r.elapsedSeconds = trainSeconds_;
    const double dt = trainSeconds_ - lastEvalSeconds_;
    r.stepsPerSecond = dt > 0 ? double(record_.stepsDone - lastEvalStep_) / dt : 0;
    r.trainLoss = lossCount_ > 0 ? lossSum_ / lossCount_ : std::numeric_limits<double>::quiet_NaN();
    r.probe = traceOf(probe_);
    record_.history.push_back(r);
    // Best validation; ties go to the latest evaluation (validation often saturates at 1.0 while the
    // model keeps improving), and with no validation split the latest evaluation is taken.
    const int idx = int(record_.history.size()) - 1;
    const bool better = task_.depths(Split::Valid).empty() || record_.bestEval < 0 ||
                        r.validAccuracy >= record_.history[record_.bestEval].validAccuracy;
    if (better) {
        record_.bestEval = idx;
        bestParams_.assign(model_.params().values().begin(), model_.params().values().end());
    }
    lossSum_ = 0;
    lossCount_ = 0;
    lastEvalStep_ = record_.stepsDone;
    lastEvalSeconds_ = trainSeconds_;
    return r;
}

} // namespace ndr

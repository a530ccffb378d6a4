// Measuring a model: its accuracy on sets of examples, and the evaluation record of every depth with
// the routing, halting and per-operation figures (docs/design.md §3).
#include "core/train/trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

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
    std::pair<double, double> out;
    accuracyInto(examples, steps, nullptr, out);
    return out;
}

std::vector<char> Trainer::answeredRight(const std::vector<Example>& examples, int steps) {
    std::pair<double, double> out;
    RoutingTally tally;
    accuracyInto(examples, steps, nullptr, out, &tally);
    return tally.right;
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

bool Trainer::accuracyInto(const std::vector<Example>& examples, int steps, const std::atomic<bool>* stop,
                           std::pair<double, double>& out, RoutingTally* tally) {
    setThreads();
    if (steps <= 0)
        steps = model_.config().effectiveEvalSteps();
    // 128 examples at a time: their activations stay in a core's caches between the passes of a step,
    // and an evaluation gives way to `stop` sooner (docs/design.md §3).
    const size_t chunk = 128;
    size_t correct = 0;
    double lossSum = 0;
    Rng unused(0);
    for (size_t start = 0; start < examples.size(); start += chunk) {
        if (stop && stop->load(std::memory_order_relaxed))
            return false;
        const size_t end = std::min(examples.size(), start + chunk);
        const std::vector<Example> part(examples.begin() + start, examples.begin() + end);
        const Batch batch = task_.makeBatch(part);
        model_.forward(batch, steps, false, unused, false);
        const ForwardStats& st = model_.stats();
        lossSum += st.crossEntropy * double(part.size());
        if (tally) {
            const double w = double(part.size());
            tally->weight += w;
            tally->routeEntropy += st.routeEntropy * w;
            tally->headShare.resize(st.headShare.size(), 0.0);
            for (size_t h = 0; h < st.headShare.size(); ++h)
                tally->headShare[h] += st.headShare[h] * w;
            if (!st.haltSteps.empty()) {
                tally->haltCounts.resize(size_t(steps) + 1, 0);
                for (int s : st.haltSteps)
                    ++tally->haltCounts[size_t(std::clamp(s, 0, steps))];
            }
        }
        const size_t right = rightAnswers(batch, tally ? &tally->right : nullptr);
        correct += right;
        // A halting model is run again for every step, to tell what halting costs; when no example
        // stopped early the answers are those already counted.
        if (tally && !st.haltSteps.empty()) {
            if (std::any_of(st.haltSteps.begin(), st.haltSteps.end(), [&](int s) { return s < steps; })) {
                const ModelConfig& halting = model_.config();
                const double threshold = halting.haltThreshold;
                const HaltSignal on = halting.haltOn;
                model_.setHalting(0, on);
                model_.forward(batch, steps, false, unused, false);
                model_.setHalting(threshold, on);
                tally->everyStepCorrect += double(rightAnswers(batch));
            } else {
                tally->everyStepCorrect += double(right);
            }
        }
    }
    const double n = double(std::max<size_t>(1, examples.size()));
    out = {double(correct) / n, lossSum / n};
    return true;
}

EvalRecord Trainer::evaluate() {
    return *evaluateUnless(nullptr);
}

EvalRecord Trainer::measureOn(const DepthSets& sets, int steps) {
    return *measureUnless(steps, nullptr, &sets);
}

std::optional<EvalRecord> Trainer::measureUnless(int steps, const std::atomic<bool>* stop,
                                                 const DepthSets* sets) {
    EvalRecord r;
    std::vector<double> train, valid, test;
    RoutingTally all;
    std::vector<std::map<std::string, std::pair<int, int>>> byOperation; // per depth
    const std::vector<int> depths = task_.allDepths();
    const size_t n = sets ? sets->size() : depths.size();
    for (size_t i = 0; i < n; ++i) {
        const int d = sets ? (*sets)[i].first : depths[i];
        std::pair<double, double> result;
        RoutingTally tally;
        const std::vector<Example>* drawn = sets ? &(*sets)[i].second : task_.evalSetUnless(d, stop);
        if (!drawn)
            return std::nullopt;
        const std::vector<Example>& set = *drawn;
        if (!accuracyInto(set, steps, stop, result, &tally))
            return std::nullopt;
        all.weight += tally.weight;
        all.routeEntropy += tally.routeEntropy;
        all.headShare.resize(tally.headShare.size(), 0.0);
        for (size_t h = 0; h < tally.headShare.size(); ++h)
            all.headShare[h] += tally.headShare[h];
        if (!tally.haltCounts.empty()) {
            r.haltCounts.push_back(tally.haltCounts);
            r.everyStepAccuracy.push_back(tally.everyStepCorrect / double(std::max<size_t>(1, set.size())));
        }
        const auto [acc, loss] = result;
        r.depths.push_back(d);
        r.accuracy.push_back(acc);
        r.loss.push_back(loss);
        r.baseline.push_back(majorityBaseline(task_, set).accuracy);
        // Each example's root operation, and whether it was answered right: (examples, right)
        std::map<std::string, std::pair<int, int>>& ops = byOperation.emplace_back();
        for (size_t e = 0; e < set.size(); ++e)
            if (const std::string op = task_.rootOperation(set[e]); !op.empty()) {
                ++ops[op].first;
                ops[op].second += e < tally.right.size() && tally.right[e];
            }
        switch (task_.splitOf(d)) {
        case Split::Train:
            train.push_back(acc);
            break;
        case Split::Valid:
            valid.push_back(acc);
            break;
        case Split::Test:
            test.push_back(acc);
            break;
        case Split::None:
            break;
        }
    }
    // Every operation of any depth, in name order, with a column in every depth's row.
    std::set<std::string> names;
    for (const auto& ops : byOperation)
        for (const auto& [op, counts] : ops)
            names.insert(op);
    r.operations.assign(names.begin(), names.end());
    if (!names.empty())
        for (const auto& ops : byOperation) {
            auto& examples = r.operationExamples.emplace_back(names.size(), 0);
            auto& correct = r.operationCorrect.emplace_back(names.size(), 0);
            for (size_t o = 0; o < r.operations.size(); ++o)
                if (const auto it = ops.find(r.operations[o]); it != ops.end()) {
                    examples[o] = it->second.first;
                    correct[o] = it->second.second;
                }
        }
    r.trainAccuracy = mean(train);
    r.validAccuracy = mean(valid);
    r.testAccuracy = mean(test);
    if (!all.headShare.empty() && all.weight > 0) {
        r.routeEntropy = all.routeEntropy / all.weight;
        for (double& share : all.headShare)
            share /= all.weight;
        r.headShare = all.headShare;
    }
    return r;
}

std::optional<EvalRecord> Trainer::evaluateUnless(const std::atomic<bool>* stop) {
    std::optional<EvalRecord> measured = measureUnless(0, stop);
    if (!measured)
        return std::nullopt;
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

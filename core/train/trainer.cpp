// The training loop of one model (docs/design.md §3).
#include "core/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <omp.h>
#include <set>
#include <sstream>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

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

constexpr uint64_t kDropoutStream = 0x5DEECE66DULL;

} // namespace

Example defaultProbe(const Task& task) {
    const auto test = task.depths(Split::Test);
    return task.firstEvalExample(test.back());
}

Trainer::Trainer(const RunConfig& config, int modelIndex, const Task& task, const Example& probe)
    : config_(config), modelIndex_(modelIndex), task_(task), probe_(probe),
      owned_(makeModel<float>(config.models.at(modelIndex), task.vocabSize(), task.answerCount())),
      model_(*owned_), batchRng_(config.train.seed),
      dropoutRng_(uint32_t(config.train.seed * 2654435761ULL ^ kDropoutStream)),
      step_(model_, config.train.threads) {
    model_.init(config.train.seed);
    baseLearningRate_ = config.models[modelIndex].effectiveLearningRate(config.train.learningRate);
    adam_.learningRate = baseLearningRate_;
    adam_.weightDecay = config.models[modelIndex].effectiveWeightDecay(config.train.weightDecay);
    record_.config = config.models[modelIndex];
}

namespace {

// Flush-to-zero and denormals-are-zero in this thread's SSE/AVX control register.
void flushDenormals() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(_mm_getcsr() | _MM_FLUSH_ZERO_ON | 0x0040 /* DAZ */);
#endif
}

} // namespace

void prepareComputeThread(int threads) {
    threads = std::max(1, threads);
    omp_set_num_threads(threads);
    // Threads inherit the control register when they are created; a team made earlier is set here.
    thread_local int preparedTeam = 0;
    if (preparedTeam >= threads)
        return;
    flushDenormals();
#pragma omp parallel num_threads(threads)
    flushDenormals();
    preparedTeam = threads;
}

double learningRateAt(const TrainConfig& train, double base, int step) {
    if (train.lrDecaySteps <= 0)
        return base;
    return base * std::pow(train.lrDecayFactor, step / train.lrDecaySteps);
}

void Trainer::setThreads() const {
    prepareComputeThread(config_.train.threads);
}

double Trainer::trainStep() {
    setThreads();
    const Batch batch = task_.trainBatch(config_.train.batchSize, batchRng_);
    auto& store = model_.params();
    store.zeroGrad();
    const float loss = step_.forwardBackward(model_, batch, model_.config().steps, dropoutRng_);
    if (!std::isfinite(loss))
        return loss;
    clipGradNorm(store.grads().data(), store.size(), config_.train.gradClip);
    adam_.learningRate = learningRateAt(config_.train, baseLearningRate_, record_.stepsDone);
    adam_.step(store.values().data(), store.grads().data(), store.size());
    ++record_.stepsDone;
    return loss;
}

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
    const size_t chunk = 512;
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

Trace Trainer::traceOf(const Example& e, int steps, bool fullGates) {
    setThreads();
    if (steps <= 0)
        steps = model_.config().effectiveEvalSteps();
    Trace tr = model_.trace(task_.tokens(e), task_.readouts(), steps, fullGates);
    for (int t : tr.tokens)
        tr.tokenNames.push_back(task_.tokenName(t));
    tr.intermediates = task_.intermediates(e);
    tr.answer = task_.answer(e);
    return tr;
}

std::optional<std::string> earlyStopReason(const RunConfig& config, const std::vector<EvalRecord>& history) {
    const TrainConfig& train = config.train;
    if (train.stopPatience <= 0 || history.empty())
        return std::nullopt;
    const EvalRecord& last = history.back();
    if (!(last.trainAccuracy >= train.stopIid))
        return std::nullopt;
    // The monitored depths: the validation split, or the training depths when there is none.
    const TaskConfig& t = config.task;
    const bool hasValid = t.validMinDepth <= t.validMaxDepth;
    const int lo = hasValid ? t.validMinDepth : t.trainMinDepth,
              hi = hasValid ? t.validMaxDepth : t.trainMaxDepth;
    const auto accuracy = [hasValid](const EvalRecord& r) {
        return hasValid ? r.validAccuracy : r.trainAccuracy;
    };
    const auto loss = [lo, hi](const EvalRecord& r) {
        double sum = 0;
        int n = 0;
        for (size_t i = 0; i < r.depths.size() && i < r.loss.size(); ++i)
            if (r.depths[i] >= lo && r.depths[i] <= hi) {
                sum += r.loss[i];
                ++n;
            }
        return n > 0 ? sum / n : std::numeric_limits<double>::quiet_NaN();
    };
    // Evaluations since the accuracy last rose above every earlier one, and since the loss last fell
    // below every earlier one.
    size_t bestAccuracy = 0, bestLoss = 0;
    for (size_t i = 1; i < history.size(); ++i) {
        if (accuracy(history[i]) > accuracy(history[bestAccuracy]))
            bestAccuracy = i;
        if (loss(history[i]) < loss(history[bestLoss]))
            bestLoss = i;
    }
    const size_t sinceAccuracy = history.size() - 1 - bestAccuracy, sinceLoss = history.size() - 1 - bestLoss;
    const size_t patience = size_t(train.stopPatience);
    if (sinceAccuracy < patience && sinceLoss < patience)
        return std::nullopt;
    const char* split = hasValid ? "validation" : "IID";
    std::ostringstream os;
    os << "stopped early at step " << last.step << ": IID " << last.trainAccuracy << ", and for "
       << std::max(sinceAccuracy, sinceLoss) << " evaluations the " << split << " "
       << (sinceAccuracy >= sinceLoss ? "accuracy has not risen above " : "loss has not fallen below ");
    if (sinceAccuracy >= sinceLoss)
        os << accuracy(history[bestAccuracy]) << " (step " << history[bestAccuracy].step << ")";
    else
        os << loss(history[bestLoss]) << " (step " << history[bestLoss].step << ")";
    return os.str();
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
        const std::vector<Example>& set = sets ? (*sets)[i].second : task_.evalSet(d);
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

ModelStatus Trainer::run(const ProgressFn& onProgress, const std::atomic<bool>* stop) {
    using Clock = std::chrono::steady_clock;
    const int total = config_.train.steps;
    const auto stopped = [&] { return stop && stop->load(std::memory_order_relaxed); };
    record_.status = {ModelState::Training, {}};
    double rate = 0;
    auto progressNow = [&](double loss) {
        TrainProgress p;
        p.step = record_.stepsDone;
        p.totalSteps = total;
        p.loss = loss;
        p.stepsPerSecond = rate;
        p.etaSeconds = rate > 0 ? (total - p.step) / rate : 0;
        return p;
    };
    double lastLoss = std::numeric_limits<double>::quiet_NaN();
    while (true) {
        if (evalPending_) {
            // An evaluation can take a while on big sets: it gives way to `stop` between chunks and is
            // done first thing on the next call instead.
            const auto r = evaluateUnless(stop);
            if (!r)
                break;
            evalPending_ = false;
            TrainProgress p = progressNow(lastLoss);
            p.eval = &*r;
            if (onProgress)
                onProgress(p);
            continue;
        }
        if (record_.stepsDone >= total) {
            record_.status = {ModelState::Finished, {}};
            return record_.status;
        }
        if (auto reason = earlyStopReason(config_, record_.history)) {
            record_.status = {ModelState::Finished, std::move(*reason)};
            return record_.status;
        }
        if (stopped())
            break;
        const auto t0 = Clock::now();
        const double loss = trainStep();
        const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!std::isfinite(loss)) {
            std::ostringstream os;
            os << "the training loss became " << loss << " at step " << record_.stepsDone + 1;
            record_.status = {ModelState::Diverged, os.str()};
            return record_.status;
        }
        trainSeconds_ += dt;
        lossSum_ += loss;
        ++lossCount_;
        logSum_ += loss;
        if (++logCount_ == LossLog::kEvery || record_.stepsDone == total) {
            record_.lossLog.steps.push_back(record_.stepsDone);
            record_.lossLog.loss.push_back(logSum_ / logCount_);
            logSum_ = 0;
            logCount_ = 0;
        }
        rate = rate == 0 ? 1.0 / dt : 0.95 * rate + 0.05 / dt;
        lastLoss = loss;
        evalPending_ = record_.stepsDone % config_.train.evalInterval == 0 || record_.stepsDone == total;
        if (!evalPending_ && onProgress)
            onProgress(progressNow(loss));
    }
    record_.status = {ModelState::Stopped, {}};
    return record_.status;
}

bool Trainer::useBestWeights() {
    auto& values = model_.params().values();
    if (bestParams_.size() != values.size())
        return false;
    values.assign(bestParams_.begin(), bestParams_.end());
    return true;
}

CheckpointData Trainer::checkpoint() const {
    CheckpointData d;
    d.model = model_.config();
    d.vocabSize = model_.vocabSize();
    d.symbols = model_.symbols();
    d.step = record_.stepsDone;
    d.layout = model_.params().layout();
    d.params.assign(model_.params().values().begin(), model_.params().values().end());
    d.bestParams = bestParams_;
    d.adamM = adam_.m;
    d.adamV = adam_.v;
    std::ostringstream os;
    os << batchRng_ << ' ' << dropoutRng_ << ' ' << adam_.t << ' ' << trainSeconds_;
    d.rngState = os.str();
    return d;
}

void Trainer::restore(const CheckpointData& data, const ModelRecord& record,
                      const std::filesystem::path& path) {
    checkCheckpointMatches(data, model_.config(), model_.params().layout(), path);
    model_.params().values().assign(data.params.begin(), data.params.end());
    bestParams_ = data.bestParams;
    adam_.m = data.adamM;
    adam_.v = data.adamV;
    if (!data.rngState.empty()) {
        std::istringstream is(data.rngState);
        is >> batchRng_ >> dropoutRng_ >> adam_.t >> trainSeconds_;
        if (!is)
            throw FileError("checkpoint: the training generator state is damaged");
    }
    record_ = record;
    record_.stepsDone = int(data.step);
    lastEvalStep_ = record_.stepsDone;
    lastEvalSeconds_ = trainSeconds_;
}

} // namespace ndr

// The training loop of one model (docs/design.md §3).
#include "core/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <omp.h>
#include <sstream>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace ndr {

namespace {

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
    modelSteps_ = factsOf(config.models[modelIndex]).steps;
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
    double rate = base;
    if (train.warmupSteps > 0 && step < train.warmupSteps)
        rate *= double(step + 1) / train.warmupSteps;
    if (train.cosineDecay) {
        // Half a cosine over the steps after the warm-up: the full rate at its first step, 0 at `steps`.
        const int span = train.steps - train.warmupSteps;
        const double done = span > 0 ? std::clamp(double(step - train.warmupSteps) / span, 0.0, 1.0) : 1.0;
        if (step >= train.warmupSteps)
            rate *= 0.5 * (1 + std::cos(M_PI * done));
    }
    if (train.lrDecaySteps > 0)
        rate *= std::pow(train.lrDecayFactor, step / train.lrDecaySteps);
    return rate;
}

void Trainer::setThreads() const {
    prepareComputeThread(config_.train.threads);
}

double Trainer::trainStep() {
    setThreads();
    evalProgress_.reset(); // an interrupted evaluation measured the weights this step changes
    const Batch batch = task_.trainBatch(config_.train.batchSize, batchRng_);
    auto& store = model_.params();
    store.zeroGrad();
    const float loss = step_.forwardBackward(model_, batch, modelSteps_, dropoutRng_);
    if (!std::isfinite(loss))
        return loss;
    clipGradNorm(store.grads().data(), store.size(), config_.train.gradClip);
    adam_.learningRate = learningRateAt(config_.train, baseLearningRate_, record_.stepsDone);
    adam_.step(store.values().data(), store.grads().data(), store.size());
    ++record_.stepsDone;
    return loss;
}

Trace Trainer::traceOf(const Example& e, int steps, bool fullGates) {
    setThreads();
    if (steps <= 0)
        steps = factsOf(model_.config()).evalSteps;
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

ModelStatus Trainer::run(const ProgressFn& onProgress, const std::atomic<bool>* stop) {
    using Clock = std::chrono::steady_clock;
    const int total = config_.train.steps;
    const auto stopped = [&] { return stop && stop->load(std::memory_order_relaxed); };
    record_.status = {ModelState::Training, {}};
    auto progressNow = [&](double loss) {
        TrainProgress p;
        p.step = record_.stepsDone;
        p.totalSteps = total;
        p.loss = loss;
        p.stepsPerSecond = rate_;
        p.etaSeconds = rate_ > 0 ? (total - p.step) / rate_ : 0;
        return p;
    };
    while (true) {
        if (evalPending_) {
            // An evaluation can take a while on big sets: it reports how far it is after each pass,
            // gives way to `stop` between passes and goes on first thing on the next call.
            const auto r = evaluateUnless(stop, [&](double done) {
                if (!onProgress)
                    return;
                TrainProgress p = progressNow(lastLoss_);
                p.evaluating = done;
                onProgress(p);
            });
            if (!r)
                break;
            evalPending_ = false;
            TrainProgress p = progressNow(lastLoss_);
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
        rate_ = rate_ == 0 ? 1.0 / dt : 0.95 * rate_ + 0.05 / dt;
        lastLoss_ = loss;
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
    evalProgress_.reset();
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
    std::ostringstream batch, dropout;
    batch << batchRng_;
    dropout << dropoutRng_;
    d.training = TrainingState{batch.str(), dropout.str(), adam_.t, trainSeconds_};
    return d;
}

void Trainer::restore(const CheckpointData& data, const ModelRecord& record) {
    checkCheckpointMatches(data, model_.config(), model_.params().layout());
    // Everything is read before anything changes, so a refused checkpoint leaves the trainer as it was.
    auto batchRng = batchRng_;
    auto dropoutRng = dropoutRng_;
    if (data.training) {
        std::istringstream batch(data.training->batchRng), dropout(data.training->dropoutRng);
        batch >> batchRng;
        dropout >> dropoutRng;
        if (!batch || !dropout)
            throw FileError("the training generator state is damaged");
        adam_.t = data.training->adamStep;
        trainSeconds_ = data.training->seconds;
    }
    batchRng_ = batchRng;
    dropoutRng_ = dropoutRng;
    model_.params().values().assign(data.params.begin(), data.params.end());
    bestParams_ = data.bestParams;
    adam_.m = data.adamM;
    adam_.v = data.adamV;
    record_ = record;
    record_.stepsDone = int(data.step);
    lastEvalStep_ = record_.stepsDone;
    lastEvalSeconds_ = trainSeconds_;
    // A run saved while the evaluation of its last step was under way has it done first.
    const int done = record_.stepsDone;
    const bool evalStep = done > 0 && (done % config_.train.evalInterval == 0 || done == config_.train.steps);
    evalPending_ = evalStep && (record_.history.empty() || record_.history.back().step != done);
    evalProgress_.reset();
}

} // namespace ndr

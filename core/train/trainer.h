// Trains one model of a run: fresh balanced batches, AdamW, clipping, evaluation per depth every N
// steps with best-validation selection, and a trace of the probe example at each evaluation.
// Knows nothing of threads or windows: progress goes out through a callback, stop comes in as a flag.
#pragma once

#include "core/config/model_kind.h"
#include "core/io/files.h"
#include "core/nn/model.h"
#include "core/nn/optimizer.h"
#include "core/records/records.h"
#include "core/task/task.h"
#include "core/train/split_step.h"

#include <atomic>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

namespace ndr {

struct TrainProgress {
    int step = 0, totalSteps = 0;
    double loss = 0;           // this step's training loss
    double stepsPerSecond = 0; // recent rate
    double etaSeconds = 0;
    const EvalRecord* eval = nullptr; // set when this call reports an evaluation
    // Set on the calls made while an evaluation is under way (between its passes): how much of it is
    // done, in (0, 1]. Such a call reports no step; the step and loss are those of the last one.
    double evaluating = -1;
};
using ProgressFn = std::function<void(const TrainProgress&)>;

// Why a model with early stopping (TrainConfig::stopPatience > 0) is done after the evaluations in
// `history`, or nullopt while it is not (docs/design.md §3): the latest IID is at least stopIid, and
// on the validation depths (the training depths without a validation split) either the accuracy has
// not risen above its earlier maximum or the loss has not fallen below its earlier minimum in the last
// stopPatience evaluations. A function of the configuration and the history alone, so a resumed run
// stops where an uninterrupted one would.
std::optional<std::string> earlyStopReason(const RunConfig& config, const std::vector<EvalRecord>& history);

// The example traced at every evaluation: the first of the deepest test depth's evaluation set.
Example defaultProbe(const Task& task);

// Prepares the calling thread to train or evaluate: `threads` OpenMP threads, and float values below the
// normal range (about 1e-38) flushed to zero in this thread and its OpenMP team (docs/design.md §3).
void prepareComputeThread(int threads);

// The learning rate of the update after `step` steps (0-based) for a model whose own rate is `base`:
// TrainConfig's warm-up, then its cosine or stepwise decay (docs/design.md §3).
double learningRateAt(const TrainConfig& train, double base, int step);

class Trainer {
public:
    // `task` must outlive the trainer. Initialises the model from config.train.seed.
    Trainer(const RunConfig& config, int modelIndex, const Task& task, const Example& probe);

    // Continues from a checkpoint and the model's history; throws FileError, saying what does not fit
    // but not naming the file, and changes nothing when they do not fit.
    void restore(const CheckpointData& data, const ModelRecord& record);

    // Trains until config.train.steps are done, early stopping says so (earlyStopReason, the reason in
    // the Finished status's message), `stop` becomes true, or the loss is not finite.
    // Evaluates every evalInterval steps and after the last step; `stop` also interrupts an
    // evaluation (between two passes of examples, or while its sets are drawn), which the next call
    // goes on with from where it stopped. Returns the final status (Finished, Stopped, or Diverged
    // with the step), also kept in record().status.
    ModelStatus run(const ProgressFn& onProgress, const std::atomic<bool>* stop);

    double trainStep();    // one optimisation step; returns the loss
    EvalRecord evaluate(); // on the fixed evaluation sets, at the current step (appended to history)
    // Accuracy and mean loss on a set of examples, with `steps` steps (0: the model's evaluation steps).
    std::pair<double, double> accuracy(const std::vector<Example>& examples, int steps = 0);
    // Whether each example is answered right (every readout), batched as accuracy() batches them.
    std::vector<char> answeredRight(const std::vector<Example>& examples, int steps = 0);
    Trace traceOf(const Example& e, int steps = 0, bool fullGates = false);
    // Every depth's accuracy and loss with `steps` steps (0: the model's evaluation steps), with the
    // routing and halting figures, as evaluate() measures them but without recording anything (the
    // step, timing and probe fields stay empty).
    EvalRecord measure(int steps = 0);
    // Examples to measure on, per depth: (depth, examples), depths ascending.
    using DepthSets = std::vector<std::pair<int, std::vector<Example>>>;
    // As measure(), on these examples in place of the evaluation sets; the split means count each
    // depth by the task's split of it.
    EvalRecord measureOn(const DepthSets& sets, int steps = 0);

    // Changes how many steps run() trains in all (to continue a finished run).
    void setTotalSteps(int steps) { config_.train.steps = steps; }

    // Replaces the weights with those of the best validation, when there are any; false otherwise.
    bool useBestWeights();

    const ModelRecord& record() const { return record_; }
    CheckpointData checkpoint() const;
    Model<float>& model() { return model_; }
    int step() const { return record_.stepsDone; }
    int totalSteps() const { return config_.train.steps; }
    const Task& task() const { return task_; }

private:
    void setThreads() const;
    // Head routing and halting figures gathered over an evaluation set (see EvalRecord).
    struct RoutingTally {
        double routeEntropy = 0, weight = 0;
        std::vector<double> headShare;
        std::vector<int> haltCounts; // (steps + 1)
        double everyStepCorrect = 0; // examples right when the halting model runs every step
        std::vector<char> right;     // per example in order: answered right
    };
    // One set's measurement so far: its first `examples` examples.
    struct SetProgress {
        size_t examples = 0, correct = 0;
        double lossSum = 0; // cross-entropy summed over the examples
        RoutingTally tally;
    };
    // An evaluation so far: the depths measured, and the one under way. Kept when a stop interrupts
    // an evaluation of run(), so that the next call goes on from there; valid while the weights are
    // those it measured (training, restoring or taking the best weights drops it).
    struct MeasureProgress {
        EvalRecord record; // the depths measured so far
        std::vector<double> train, valid, test;
        RoutingTally all;
        std::vector<std::map<std::string, std::pair<int, int>>> byOperation; // per depth: (examples, right)
        size_t depth = 0;                                                    // index of the depth under way
        SetProgress set;                                                     // and how far its set is
    };
    // Called between two passes of an evaluation with the part of it done.
    using PassFn = std::function<void(double)>;
    // Examples of `batch` whose every readout is right in the model's last forward; with `each`, also
    // appends whether each example is.
    size_t rightAnswers(const Batch& batch, std::vector<char>* each = nullptr) const;
    // Measures `examples` from p.examples on, with the routing and halting figures and whether each
    // example is answered right in p.tally; gives up (false) between two passes when `stop` is set,
    // p then holding what was measured. The loss is the cross-entropy alone. `onPass` is called after
    // each pass with the examples measured.
    bool measureSet(const std::vector<Example>& examples, int steps, const std::atomic<bool>* stop,
                    SetProgress& p, const std::function<void(size_t)>& onPass = {});
    // As measure(), giving up (nullopt) as soon as `stop` is set, with `progress` then holding what
    // was measured, from where a later call goes on. On `sets` when given, otherwise on every depth's
    // evaluation set.
    std::optional<EvalRecord> measureUnless(int steps, const std::atomic<bool>* stop, const DepthSets* sets,
                                            MeasureProgress& progress, const PassFn& onPass = {});
    std::optional<EvalRecord> evaluateUnless(const std::atomic<bool>* stop, const PassFn& onPass = {});

    RunConfig config_;
    int modelIndex_;
    const Task& task_;
    Example probe_;
    std::unique_ptr<Model<float>> owned_; // of the kind the configuration names
    Model<float>& model_;                 // *owned_
    AdamW adam_;
    double baseLearningRate_ = 0; // the model's rate before any decay
    int modelSteps_ = 0;          // the steps a training forward runs (ModelFacts::steps)
    std::mt19937_64 batchRng_;
    Rng dropoutRng_;
    SplitStep step_; // the batch split over config.train.threads, where the model's loss allows
    ModelRecord record_;
    std::vector<float> bestParams_;
    double trainSeconds_ = 0;
    double lossSum_ = 0; // since the last evaluation
    int lossCount_ = 0;
    bool evalPending_ = false;                      // an evaluation is due before the next step
    std::unique_ptr<MeasureProgress> evalProgress_; // of the due evaluation, when one was interrupted
    // The recent steps/s and the last step's loss, reported by run(): kept from one call to the next,
    // so that an evaluation first in a call, and the first steps of a call, report the run's rate.
    double rate_ = 0;
    double lastLoss_ = std::numeric_limits<double>::quiet_NaN();
    double logSum_ = 0; // since the last loss-log point
    int logCount_ = 0;
    int lastEvalStep_ = 0;
    double lastEvalSeconds_ = 0;
};

} // namespace ndr

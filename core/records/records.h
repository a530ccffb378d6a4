// What training produces and files keep: evaluation records, the trace of one example (docs/design.md §5),
// and the run record that ties a configuration to its history.
#pragma once

#include "core/config/config.h"
#include "core/task/task.h"

#include <cmath>
#include <string>
#include <vector>

namespace ndr {

// Name and shape of one parameter tensor, in storage order.
struct TensorInfo {
    std::string name;
    int rows = 0, cols = 0;
    bool operator==(const TensorInfo&) const = default;
};

// What a trace's gates are: a copy gate's mean over channels (the encoder), the share of the state the
// learned operators replace (ThoughtNet), or the weight of each step in a position's output, p until
// it halts and the remainder at its halting step (ACT).
enum class GateMeaning { CopyGate, OperatorWeight, HaltingWeight };

// Everything the inspector reads for one example (docs/design.md §5). Step t = 1..steps is one application of
// the layer; "after step 0" means the embeddings.
struct Trace {
    std::vector<int> tokens;             // (T) token ids `[B] ... [E]`
    std::vector<std::string> tokenNames; // (T)
    int steps = 0, heads = 0, positions = 0, symbols = 0;
    int readouts = 1;             // R: the [E] readout, or one per position (multi-digit arithmetic)
    std::vector<float> attention; // (steps, H, T, T): [t][h][target][source]
    // (steps, T) mean gate over channels; ThoughtNet: the learned operators' total weight (the share of
    // the state they replace); empty for residual models.
    std::vector<float> gates;
    GateMeaning gateMeaning = GateMeaning::CopyGate;
    std::vector<float> gateChannels; // (steps, T, C) full gate vectors; filled only on request
    std::vector<float> routing;      // (steps, T, H) head routing weights; empty without head routing
    // ThoughtNet: the operator selector's weights, the zero operator first; empty for other models.
    int operators = 0;            // K + 1
    std::vector<float> selection; // (steps, T, K + 1)
    // (steps, T) how far step t moved each position's state: |h_t+1 - h_t| / |h_t| (Euclidean norms
    // over channels); empty for recurrent models, whose steps read tokens rather than update columns.
    std::vector<float> change;
    std::vector<float> stepProbs;   // (steps+1, R, S) readouts after 0..steps steps
    std::vector<int> stepReadouts;  // (steps+1, R) argmax of each readout
    std::vector<int> stepAnswers;   // (steps+1) the answer the readouts spell (spelledAnswer)
    std::vector<int> intermediates; // (T) ground truth per position (see Task::intermediates)
    int answer = -1;                // ground truth

    float att(int t, int h, int target, int source) const {
        return attention[((size_t(t) * heads + h) * positions + target) * positions + source];
    }
    float gate(int t, int pos) const { return gates[size_t(t) * positions + pos]; }
    float route(int t, int pos, int h) const { return routing[(size_t(t) * positions + pos) * heads + h]; }
    const float* probsAfter(int t, int readout = 0) const {
        return stepProbs.data() + (size_t(t) * readouts + readout) * symbols;
    }
    // The probability of the answer after step t: the product over readouts of their chosen value's.
    double answerProbability(int t) const {
        double p = 1;
        for (int k = 0; k < readouts; ++k)
            p *= probsAfter(t, k)[stepReadouts[size_t(t) * readouts + k]];
        return p;
    }
    float changeAt(int t, int pos) const { return change[size_t(t) * positions + pos]; }
    float select(int t, int pos, int op) const {
        return selection[(size_t(t) * positions + pos) * operators + op];
    }
};

// One evaluation during training.
struct EvalRecord {
    int step = 0;                 // training steps done
    double elapsedSeconds = 0;    // training wall time so far (evaluation excluded)
    double stepsPerSecond = 0;    // since the previous evaluation
    double trainLoss = 0;         // mean training loss since the previous evaluation
    std::vector<int> depths;      // evaluated depths, ascending
    std::vector<double> accuracy; // (depths) on the fixed evaluation sets
    std::vector<double> loss;     // (depths) mean cross-entropy on the same sets
    // (depths) the accuracy of always giving the depth's most common answer on the same sets
    // (majorityBaseline): the level a model reaches without reading its input. Empty when the run
    // file has none.
    std::vector<double> baseline;
    double trainAccuracy = 0; // means over the depths of each split (NaN if the split is empty)
    double validAccuracy = 0;
    double testAccuracy = 0;
    Trace probe; // trace of the run's probe example (may be empty)
    // Head routing (empty without): mean routing entropy and each head's mean weight over the
    // evaluation examples' real tokens and steps.
    double routeEntropy = 0;
    std::vector<double> headShare; // (H)
    // Gate halting (empty without a halt threshold): per depth, how many examples halted after each
    // number of steps, haltCounts[d][s] for s = 0..steps (0 never occurs: at least one step runs).
    std::vector<std::vector<int>> haltCounts; // (depths, steps + 1)
    // With gate halting: per depth, the accuracy on the same sets when the model runs every step, so
    // that accuracy minus this is what halting costs (empty without halting).
    std::vector<double> everyStepAccuracy; // (depths)
    // Tasks whose expressions have an operation at the root (Task::rootOperation: arithmetic's + and *,
    // ListOps' MAX, MED, MIN, SM; empty for the others): the operations in name order, and per depth
    // how many of its examples each one roots and how many of those the model answered.
    std::vector<std::string> operations;
    std::vector<std::vector<int>> operationExamples; // (depths, operations)
    std::vector<std::vector<int>> operationCorrect;  // (depths, operations)
    // The accuracy on depth index d's examples rooted in operation o (NaN when it roots none).
    double operationAccuracy(size_t d, size_t o) const {
        const int n = operationExamples[d][o];
        return n > 0 ? double(operationCorrect[d][o]) / n : std::nan("");
    }
    // The mean number of steps run at depth index d (0 when nothing was counted).
    double meanHaltStep(size_t d) const {
        double n = 0, sum = 0;
        for (size_t s = 0; s < haltCounts[d].size(); ++s) {
            n += haltCounts[d][s];
            sum += double(s) * haltCounts[d][s];
        }
        return n > 0 ? sum / n : 0;
    }
};

// The mean over the depths of `split` of the accuracy on the examples rooted in operation o of
// `eval.operations`, leaving out the depths where it roots none (NaN when none is left).
inline double operationSplitMean(const EvalRecord& eval, size_t o, const TaskConfig& task, Split split) {
    std::vector<int> depths;
    std::vector<double> values;
    for (size_t d = 0; d < eval.depths.size() && d < eval.operationExamples.size(); ++d)
        if (const double a = eval.operationAccuracy(d, o); !std::isnan(a)) {
            depths.push_back(eval.depths[d]);
            values.push_back(a);
        }
    return splitMean(task, depths, values, split);
}

// The mean number of steps run over every example counted in `eval.haltCounts` (0 when none): with the
// fixed step count N, 1 - this / N is the share of computation halting saved.
inline double meanStepsRun(const EvalRecord& eval) {
    double n = 0, sum = 0;
    for (const auto& counts : eval.haltCounts)
        for (size_t s = 0; s < counts.size(); ++s) {
            n += counts[s];
            sum += double(s) * counts[s];
        }
    return n > 0 ? sum / n : 0;
}

// The training loss over the run, one point per kLossLogEvery steps (the mean over those steps), so
// the learning curve of a reopened run is the one seen live.
struct LossLog {
    static constexpr int kEvery = 10;
    std::vector<int> steps;   // the last step of each window
    std::vector<double> loss; // (steps) mean training loss of the window
};

// Where a model's training stands (docs/design.md, "State is a type"). Code branches on the state; the
// message only says why, for people.
enum class ModelState {
    New,      // not trained yet
    Training, // steps are being run
    Paused,   // training waits to be resumed (the app only; never in a file)
    Stopped,  // stopped before its last step; it can train further
    Finished, // trained all its steps
    Diverged, // the training loss stopped being finite; the message says when
    Failed,   // training threw; the message says what
};

struct ModelStatus {
    ModelState state = ModelState::New;
    std::string message; // why, for Diverged and Failed; empty otherwise
    bool operator==(const ModelStatus&) const = default;
};

// "new", "training", "paused", "stopped", "finished", "diverged", "failed".
inline const char* stateName(ModelState s) {
    switch (s) {
    case ModelState::New:
        return "new";
    case ModelState::Training:
        return "training";
    case ModelState::Paused:
        return "paused";
    case ModelState::Stopped:
        return "stopped";
    case ModelState::Finished:
        return "finished";
    case ModelState::Diverged:
        return "diverged";
    case ModelState::Failed:
        return "failed";
    }
    return "?";
}

// The status as people read it and run files store it: the state's name, then ": " and the message
// when there is one ("diverged: the training loss became nan at step 12").
inline std::string statusText(const ModelStatus& s) {
    return s.message.empty() ? std::string(stateName(s.state))
                             : std::string(stateName(s.state)) + ": " + s.message;
}

struct ModelRecord {
    ModelConfig config;
    std::vector<EvalRecord> history;
    LossLog lossLog;
    int bestEval = -1; // index into history with the best validation accuracy (ties: latest)
    int stepsDone = 0;
    ModelStatus status;
    std::string checkpointFile; // file name of the weights, relative to the run file
};

struct RunRecord {
    static constexpr const char* kFormat = "ndr-studio-run";
    static constexpr int kVersion = 4;
    RunConfig config;
    std::vector<std::vector<int>> tables; // function tables used (tables[f][x])
    Example probe;                        // the example traced at every evaluation
    std::vector<ModelRecord> models;
};

} // namespace ndr

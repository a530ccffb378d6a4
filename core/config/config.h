// Configuration of a run: the task, each model's encoder switches and the training recipe.
// Plain structs with defaults; validation lives in config.cpp, the presets in presets.cpp, JSON in
// core/io/serialize.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ndr {

enum class Order { Forward, Backward };
enum class AttentionKind { Softmax, Geometric };
// CopyGateTanh: the gated relative layer's update, u = tanh(FFN(z)) where NDR has u = LN2(FFN(z)).
enum class UpdateKind { Residual, CopyGate, CopyGateTanh };
// Relative and AbsRel live inside softmax attention (Transformer-XL style scores); nothing is added to
// the embeddings. AbsRel gates, per query and head, between the relative and the absolute key position.
enum class PositionalKind { None, Sinusoidal, Relative, AbsRel };
enum class GeomNorm { Off, L1 };
// The column an encoder reads its one answer from (docs/design.md §1): `[E]`, the last real position,
// or `[B]`, the first.
enum class ReadoutColumn { Last, First };
// Encoder: the configurable encoder (NDR, the Transformers); Lstm: the paper's LSTM baseline;
// ThoughtNet: learned operators mixed per token by a selector with a zero operator (docs/design.md §2).
enum class ModelKind { Encoder, Lstm, ThoughtNet };
// The task a run trains on (docs/design.md §1): compositional table lookup, the paper's simple
// arithmetic, its ListOps, or ThoughtNet's multi-digit addition and multiplication.
enum class TaskKind { Ctl, Arith, ListOps, MultiDigit };
// Head routing: how the heads left out by top-k are weighted (docs/design.md §2, "Head routing").
enum class DroppedHeads {
    Masked,    // weight exactly 0: the softmax runs over the kept heads only
    SeedExact, // the write-up's code: dropped logits multiplied by 0, so each keeps weight e^0 / Z
};
// What halting reads (docs/design.md §3). Gates: each position's mean copy gate, ThoughtNet's learned
// operators' total weight. Change: how far a step moved each position's state,
// |h_t+1 - h_t| / |h_t|, which every model with columns has (not the LSTM).
enum class HaltSignal { Gates, Change };

// Both copy-gated updates: h' = g * u + (1 - g) * h.
inline bool copyGated(UpdateKind u) {
    return u == UpdateKind::CopyGate || u == UpdateKind::CopyGateTanh;
}
inline bool relativePositions(PositionalKind p) {
    return p == PositionalKind::Relative || p == PositionalKind::AbsRel;
}

// ListOps' operations in the order of its vocabulary and of the generator's draws.
inline const std::vector<std::string>& listOpsOperationNames() {
    static const std::vector<std::string> names = {"MIN", "MAX", "MED", "SM"};
    return names;
}

struct TaskConfig {
    TaskKind kind = TaskKind::Ctl;
    int symbols = 8;   // S (CTL only)
    int functions = 9; // F (CTL only)
    int trainMinDepth = 1, trainMaxDepth = 5;
    int validMinDepth = 6, validMaxDepth = 8; // validMinDepth > validMaxDepth: no validation split
    int testMinDepth = 9, testMaxDepth = 10;
    Order order = Order::Forward;    // CTL only
    uint64_t seed = 1;               // function tables and held-out sets
    int evalExamplesPerDepth = 1000; // fewer when the depth has fewer distinct cases
    // ListOps only: the operations its generator draws from, each once, any order (all four: the
    // paper's task); typed questions may use any of the four.
    std::vector<std::string> operations = listOpsOperationNames();

    bool operator==(const TaskConfig&) const = default;
};

struct ModelConfig {
    std::string name = "NDR";
    ModelKind kind = ModelKind::Encoder; // the encoder below, or the LSTM baseline (docs/design.md §2)
    AttentionKind attention = AttentionKind::Geometric;
    UpdateKind update = UpdateKind::CopyGate;
    PositionalKind positional = PositionalKind::None;
    GeomNorm geomNorm = GeomNorm::Off;
    bool sharedWeights = true;
    int dModel = 128, heads = 4, dFF = 256;
    int steps = 14;                // unrolled steps (layers) in training
    int evalSteps = 0;             // steps at evaluation; 0 means the same as `steps`
    float dropout = 0.1f;          // attention output, FFN hidden, gate hidden, positional encoding
    float attentionDropout = 0.1f; // keys (geometric), keys and r(p) (relative), weights (softmax)
    float gateDropout = 0.1f;      // whole gate vector of a position set to 0 (copy) in training
    float gateBiasInit = -3.0f;    // bg2
    double learningRate = 0;       // this model's rate; 0 means the run's train.learningRate
    double weightDecay = -1;       // this model's AdamW weight decay; -1 means the run's train.weightDecay
    // The LSTM's sizes (kind Lstm only). The encoder's switches and sizes above do not apply to an LSTM;
    // its `dropout` acts on the token embeddings.
    int lstmHidden = 200, lstmEmbedding = 16;
    // ThoughtNet (kind ThoughtNet only): the number of learned operators K beside the zero operator and
    // the width of the sinusoidal positions concatenated to the state. dModel is its state size, heads
    // its operators' attention heads, dFF their hidden width and the selector's, steps the iterations in
    // training; thoughtCost is its urgency and haltThreshold its fixed-point threshold.
    int operators = 4, positionDims = 16;
    // Head routing (encoder only, any attention): a gate network scales each head's output per token
    // and step; routeTopK heads are kept (0: all), routeEntropy weighs the entropy term of the loss.
    bool headRouting = false;
    int routeTopK = 0;
    DroppedHeads routeDropped = DroppedHeads::Masked;
    double routeEntropy = 0;
    // Thought cost (copy-gated models): urgency * sum_t t * mean gate openness at step t, added to the
    // loss (docs/design.md §3). haltThreshold > 0: evaluation stops an example at the first step after
    // which every real position's haltOn signal (its mean gate, or the change the step made to it) is
    // below the threshold and reads the answer there.
    double thoughtCost = 0;
    double haltThreshold = 0;
    HaltSignal haltOn = HaltSignal::Gates;
    // The column the answer is read from (encoders, tasks with one answer per example).
    ReadoutColumn readout = ReadoutColumn::Last;

    int effectiveEvalSteps() const { return evalSteps > 0 ? evalSteps : steps; }
    double effectiveLearningRate(double runRate) const { return learningRate > 0 ? learningRate : runRate; }
    double effectiveWeightDecay(double runDecay) const { return weightDecay >= 0 ? weightDecay : runDecay; }

    bool operator==(const ModelConfig&) const = default;
};

// Whether a model has the signal to halt on: gates for a copy-gated encoder and ThoughtNet (its
// operators' weight), the change per step for every model but the LSTM.
inline bool hasHaltSignal(const ModelConfig& model, HaltSignal signal) {
    if (signal == HaltSignal::Change)
        return model.kind != ModelKind::Lstm;
    return model.kind == ModelKind::ThoughtNet ||
           (model.kind == ModelKind::Encoder && copyGated(model.update));
}

struct TrainConfig {
    int batchSize = 128;
    double learningRate = 1e-3;
    double weightDecay = 0.01;
    double gradClip = 5.0; // global gradient norm; 0 disables
    // Stepwise learning-rate decay (docs/design.md §3): after every lrDecaySteps steps each model's rate
    // is multiplied by lrDecayFactor; 0 keeps the rate constant.
    int lrDecaySteps = 0;
    double lrDecayFactor = 0.5;
    // Linear warm-up (docs/design.md §3): over the first warmupSteps steps each model's rate rises
    // from 1/warmupSteps of its value to all of it; 0 starts at the full rate.
    int warmupSteps = 0;
    // Cosine decay (docs/design.md §3): after the warm-up each model's rate follows half a cosine from
    // its value down to 0 at the last step (`steps`). Not together with the stepwise decay.
    bool cosineDecay = false;
    int steps = 10000;
    int evalInterval = 500;
    uint64_t seed = 1; // initialisation, batches, dropout
    int threads = 1;   // Eigen/OpenMP threads used by one model
    // Early stopping (docs/design.md §3), off while stopPatience is 0: a model is done once its
    // accuracy on held-out examples of the training depths (IID) is at least stopIid and its
    // validation accuracy (IID without a validation split) has not risen for stopPatience evaluations.
    int stopPatience = 0;
    double stopIid = 0.99;

    bool operator==(const TrainConfig&) const = default;
};

struct RunConfig {
    std::string preset = "custom";
    TaskConfig task;
    std::vector<ModelConfig> models;
    TrainConfig train;

    bool operator==(const RunConfig&) const = default;
};

// Built-in presets: "stub", "stub-routing", "stub-thought-cost", "paper-forward", "paper-backward",
// "arith", "listops", "thoughtnet". Throws
// std::invalid_argument on an unknown name, listing the known ones.
RunConfig presetConfig(const std::string& name);
std::vector<std::string> presetNames();
// Built-in model presets "ndr" and "vanilla" with the given sizes.
ModelConfig ndrModel(int dModel, int heads, int dFF, int steps);
ModelConfig vanillaModel(int dModel, int heads, int dFF, int steps);
// The LSTM baseline of the paper's Table 1: Adam (weight decay 0) at lr 1e-3, dropout 0.5 on the embeddings.
ModelConfig lstmModel(int hidden = 200, int embedding = 16);
// ThoughtNet (docs/design.md §2) with state size dModel, K operators and at most `steps` iterations:
// urgency 2e-4 and fixed-point threshold 0.2 as in its write-up, no dropout.
ModelConfig thoughtNetModel(int dModel, int heads, int dFF, int operators, int steps);

// The rows of the paper's Table 1 as encoder switches, with the given sizes (docs/design.md §2):
// "transformer" (= vanillaModel), "rel", "rel-gate", "absrel-gate", "geom", "ndr" (= ndrModel). The
// gated rows start from ndrModel, the others from vanillaModel, and change only the switches and the
// name. Throws std::invalid_argument on an unknown row, listing the known ones.
std::vector<std::string> tableOneRows();
ModelConfig tableOneModel(const std::string& row, int dModel, int heads, int dFF, int steps);
// The row whose switches `m` has ("" when none): what the panel's row picker shows for a column.
std::string tableOneRowOf(const ModelConfig& m);

// Every problem with the configuration, one message per line naming the field ("task.symbols: must be
// between 2 and 64, got 1"). Empty when valid.
std::vector<std::string> validate(const RunConfig& config);
std::vector<std::string> validate(const TaskConfig& task);

} // namespace ndr

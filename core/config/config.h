// Configuration of a run: the CTL task, each model's encoder switches and the training recipe.
// Plain structs with defaults; validation and JSON live in config.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ndr {

enum class Order { Forward, Backward };
enum class AttentionKind { Softmax, Geometric };
enum class UpdateKind { Residual, CopyGate };
enum class PositionalKind { None, Sinusoidal };
enum class GeomNorm { Off, L1 };

struct TaskConfig {
    int symbols = 8;   // S
    int functions = 9; // F
    int trainMinDepth = 1, trainMaxDepth = 5;
    int validMinDepth = 6, validMaxDepth = 8; // validMinDepth > validMaxDepth: no validation split
    int testMinDepth = 9, testMaxDepth = 10;
    Order order = Order::Forward;
    uint64_t seed = 1;               // function tables and held-out sets
    int evalExamplesPerDepth = 1000; // fewer when the depth has fewer distinct cases
    bool operator==(const TaskConfig&) const = default;
};

struct ModelConfig {
    std::string name = "NDR";
    AttentionKind attention = AttentionKind::Geometric;
    UpdateKind update = UpdateKind::CopyGate;
    PositionalKind positional = PositionalKind::None;
    GeomNorm geomNorm = GeomNorm::Off;
    bool sharedWeights = true;
    int dModel = 128, heads = 4, dFF = 256;
    int steps = 14;                // unrolled steps (layers) in training
    int evalSteps = 0;             // steps at evaluation; 0 means the same as `steps`
    float dropout = 0.1f;          // attention output, FFN hidden, gate hidden, positional encoding
    float attentionDropout = 0.1f; // on keys (geometric) or attention weights (softmax)
    float gateDropout = 0.1f;      // whole gate vector of a position set to 0 (copy) in training
    float gateBiasInit = -3.0f;    // bg2
    double learningRate = 0;       // this model's rate; 0 means the run's train.learningRate

    int effectiveEvalSteps() const { return evalSteps > 0 ? evalSteps : steps; }
    double effectiveLearningRate(double runRate) const { return learningRate > 0 ? learningRate : runRate; }
    bool operator==(const ModelConfig&) const = default;
};

struct TrainConfig {
    int batchSize = 128;
    double learningRate = 1e-3;
    double weightDecay = 0.01;
    double gradClip = 5.0; // global gradient norm; 0 disables
    int steps = 10000;
    int evalInterval = 500;
    uint64_t seed = 1; // initialisation, batches, dropout
    int threads = 1;   // Eigen/OpenMP threads used by one model
    bool operator==(const TrainConfig&) const = default;
};

struct RunConfig {
    std::string preset = "custom";
    TaskConfig task;
    std::vector<ModelConfig> models;
    TrainConfig train;
    bool operator==(const RunConfig&) const = default;
};

// Built-in presets: "stub", "paper-forward", "paper-backward". Throws std::invalid_argument on an
// unknown name, listing the known ones.
RunConfig presetConfig(const std::string& name);
std::vector<std::string> presetNames();
// Built-in model presets "ndr" and "vanilla" with the given sizes.
ModelConfig ndrModel(int dModel, int heads, int dFF, int steps);
ModelConfig vanillaModel(int dModel, int heads, int dFF, int steps);

// Every problem with the configuration, one message per line naming the field ("task.symbols: must be
// between 2 and 64, got 1"). Empty when valid.
std::vector<std::string> validate(const RunConfig& config);
std::vector<std::string> validate(const TaskConfig& task);

} // namespace ndr

// Configuration of a run: the task, each model (its kind's own configuration) and the training recipe.
// Plain structs with defaults; validation lives in config.cpp, the presets in presets.cpp and with
// each model kind, JSON in core/io/serialize.cpp.
#pragma once

#include "core/config/fields.h"
#include "core/config/model_common.h"
#include "core/models/kinds.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ndr {

enum class Order { Forward, Backward };
// The task a run trains on (docs/design.md §1): compositional table lookup, the paper's simple
// arithmetic, its ListOps, or ThoughtNet's multi-digit addition and multiplication.
enum class TaskKind { Ctl, Arith, ListOps, MultiDigit };

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

// One model of a run: its name, its own optimiser settings, and its kind's configuration (one of
// ModelKinds' configurations: the kind is which one it holds).
struct ModelConfig {
    std::string name = "NDR";
    double learningRate = 0; // this model's rate; 0 means the run's train.learningRate
    double weightDecay = -1; // this model's AdamW weight decay; -1 means the run's train.weightDecay
    ModelKinds::Config kind = EncoderConfig{};

    template <typename C> bool is() const { return std::holds_alternative<C>(kind); }
    // The kind's configuration; std::bad_variant_access when the model is of another kind.
    template <typename C> C& as() { return std::get<C>(kind); }
    template <typename C> const C& as() const { return std::get<C>(kind); }

    double effectiveLearningRate(double runRate) const { return learningRate > 0 ? learningRate : runRate; }
    double effectiveWeightDecay(double runDecay) const { return weightDecay >= 0 ? weightDecay : runDecay; }

    bool operator==(const ModelConfig&) const = default;
};

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
// "arith", "listops", "thoughtnet", then those the model kinds bring (ModelKindInfo::runPresets).
// Throws std::invalid_argument on an unknown name, listing the known ones.
RunConfig presetConfig(const std::string& name);
std::vector<std::string> presetNames();
// Every problem with the configuration, each naming its field ("task.symbols": "must be between 2 and
// 64, got 1"). Empty when valid.
std::vector<Problem> validate(const RunConfig& config);
std::vector<Problem> validate(const TaskConfig& task);

} // namespace ndr

// The reference batch of a run's models: one training step without dropout, written down (see
// reference_batch.h).
#include "core/train/reference_batch.h"
#include "core/config/model_kind.h"

#include "core/nn/model.h"
#include "core/train/weights.h"

#include <random>

namespace ndr {

SafetensorsFile referenceBatch(const Run& run, int perDepth, uint64_t seed) {
    const Task& task = run.task();
    std::mt19937_64 rng(seed);
    std::vector<Example> examples;
    for (int d : task.allDepths())
        for (int k = 0; k < perDepth; ++k)
            examples.push_back(task.sample(d, rng));
    const Batch batch = task.makeBatch(examples);
    const auto asFloats = [](const std::vector<int>& v) { return std::vector<float>(v.begin(), v.end()); };

    SafetensorsFile out;
    out.metadata = {{"format", "ndr-studio-reference-batch"}, {"version", "1"}};
    out.tensors.push_back({"tokens", {batch.batch, batch.positions}, asFloats(batch.tokens)});
    out.tensors.push_back({"lengths", {batch.batch}, asFloats(batch.lengths)});
    out.tensors.push_back({"targets", {int64_t(batch.targets.size())}, asFloats(batch.targets)});
    const std::vector<std::string> stems = checkpointStems(run.config().models);
    prepareComputeThread(1);
    for (int i = 0; i < run.modelCount(); ++i) {
        const CheckpointData ckpt = run.trainer(i).checkpoint();
        // A training step of the same model with every dropout off: a copy of its weights in a model
        // whose dropout rates are 0.
        ModelConfig config = ckpt.model;
        disableDropout(config);
        auto model = makeModel<float>(config, ckpt.vocabSize, ckpt.symbols);
        model->params().values().assign(ckpt.params.begin(), ckpt.params.end());
        model->params().zeroGrad();
        Rng dropoutRng(0);
        const double loss = double(model->forward(batch, factsOf(config).steps, true, dropoutRng, true));
        model->backward();
        const ForwardStats& stats = model->stats();
        const std::string stem = stems[size_t(i)] + "/";
        const Mat<float>& logits = model->logits();
        out.tensors.push_back({stem + "logits",
                               {int64_t(logits.rows()), int64_t(logits.cols())},
                               std::vector<float>(logits.data(), logits.data() + logits.size())});
        out.tensors.push_back(
            {stem + "loss",
             {4},
             {float(loss), float(stats.crossEntropy), float(stats.routeEntropy), float(stats.gateCost)}});
        out.tensors.push_back({stem + "steps", {1}, {float(factsOf(config).steps)}});
        const std::vector<float> grads(model->params().grads().begin(), model->params().grads().end());
        for (SafetensorsTensor& t : weightsToSafetensors(model->params().layout(), grads).tensors) {
            t.name = stem + "grad/" + t.name;
            out.tensors.push_back(std::move(t));
        }
    }
    return out;
}

} // namespace ndr

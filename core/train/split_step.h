// A training step's forward and backward with the batch's examples split over threads, each part on a
// copy of the model of its own (docs/design.md §6, threads).
#pragma once

#include "core/nn/model.h"
#include "core/task/task.h"

#include <memory>
#include <vector>

namespace ndr {

// Examples [b0, b1) of a batch as a batch of their own: T is their longest length.
Batch examplesOf(const Batch& batch, int b0, int b1);

// Splits B examples into at most `parts` consecutive ranges of about equal real rows (every range has
// an example): the returned starts end with B.
std::vector<int> balancedParts(const std::vector<int>& lengths, int parts);

class SplitStep {
public:
    // Whether steps of `model` on `threads` threads split their batch: more than one thread, and a loss
    // that is a mean over examples (Model::lossIsExampleMean), so that the parts' gradients weighted by
    // their share of the examples are the whole batch's.
    static bool applies(const Model<float>& model, int threads);

    // Where applies(): copies of `model`'s kind for threads 2..threads (thread 1 runs the model itself).
    // Otherwise the batch stays whole.
    SplitStep(const Model<float>& model, int threads);

    // The loss of `batch` (steps `steps`, training mode) and its gradient added to `model`'s gradients,
    // which must be zero. Split: the parts run at once, each on one thread with `model`'s parameter
    // values and its own dropout stream, seeded by a word of `rng` (one per part); the gradient is the
    // parts' gradients weighted by their share of the examples, summed in part order. Whole: one forward
    // drawing from `rng`, and its backward when the loss is finite.
    float forwardBackward(Model<float>& model, const Batch& batch, int steps, Rng& rng);

private:
    int threads_;                                       // 1: the batch stays whole
    std::vector<std::unique_ptr<Model<float>>> copies_; // threads_ - 1
    std::vector<float> losses_;
};

} // namespace ndr

// What a trainer needs of a model, whatever its kind (docs/design.md §2): the encoder, the LSTM
// baseline and ThoughtNet implement it. It holds what every kind has (its configuration, vocabulary,
// parameters and last statistics). One virtual call per forward or backward; the work inside is not
// virtual.
#pragma once

#include "core/config/config.h"
#include "core/nn/layers.h"
#include "core/nn/params.h"
#include "core/records/records.h"
#include "core/task/task.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace ndr {

// What the last forward's head routing and copy gates did (docs/design.md §2-3). A model without them
// leaves everything but `crossEntropy` at zero and the vectors empty.
struct ForwardStats {
    double crossEntropy = 0;       // the mean cross-entropy: the loss without the terms below
    double routeEntropy = 0;       // mean entropy of the routing weights over real tokens and steps
    std::vector<double> headShare; // (H) mean routing weight of each head over real tokens and steps
    double gateCost = 0;           // sum_t t * mean gate openness at step t (the thought cost / urgency)
    std::vector<int> haltSteps;    // (B) steps run before halting (evaluation with a halt threshold)
};

template <typename S> class Model {
public:
    virtual ~Model() = default;

    const ModelConfig& config() const { return cfg_; }
    ParamStore<S>& params() { return store_; }
    const ParamStore<S>& params() const { return store_; }
    int vocabSize() const { return vocab_; }
    int symbols() const { return symbols_; }

    // Fresh initialisation from `seed` (the kind's own scheme, docs/design.md §2).
    virtual void init(uint64_t seed) = 0;
    // The loss of the batch: the mean cross-entropy against batch.targets plus the routing entropy and
    // thought cost terms of a model that has them (stats() holds the parts). `steps` is the number of layer
    // applications of an encoder; a recurrent model reads each example's tokens and ignores it. With
    // keepCaches the forward keeps what backward() needs.
    virtual S forward(const Batch& batch, int steps, bool training, Rng& rng, bool keepCaches) = 0;
    // Accumulates parameter gradients of the last forward (which must have kept its caches).
    virtual void backward() = 0;
    // (B*R, S) logits of the last forward: R readouts per example (Batch::readouts), example-major.
    virtual const Mat<S>& logits() const = 0;
    // One example with `readouts` readouts in evaluation mode, recorded for the inspector
    // (docs/design.md §5).
    virtual Trace trace(const std::vector<int>& tokens, int readouts, int steps, bool fullGates = false) = 0;
    // Matrix-product FLOPs of one training step (forward and backward) on this batch.
    virtual double trainingFlops(const Batch& batch, int steps) const = 0;
    // The encoder's row layout (see Encoder::setPackedRows); a model that stores only real tokens
    // anyway ignores it.
    virtual void setPackedRows(bool packed) = 0;
    // The evaluation's halting (ModelConfig::haltThreshold, 0: run every step, and haltOn). A model
    // without the signal (hasHaltSignal) runs every step.
    virtual void setHalting(double threshold, HaltSignal on) = 0;
    // True when every term of forward()'s loss is a mean over the batch's examples, so that a batch's
    // gradient is its parts' gradients weighted by their share of the examples (SplitStep).
    virtual bool lossIsExampleMean() const = 0;
    // Of the last forward.
    const ForwardStats& stats() const { return stats_; }

protected:
    Model(const ModelConfig& config, int vocabSize, int symbols)
        : cfg_(config), vocab_(vocabSize), symbols_(symbols) {}

    ModelConfig cfg_;
    int vocab_, symbols_;
    ParamStore<S> store_;
    ForwardStats stats_;
};

// Appends one step's readouts to a trace: probs (R, S) to stepProbs, the argmax of each readout to
// stepReadouts, and the answer they spell to stepAnswers.
template <typename PT> void recordReadouts(const PT& probs, Trace& tr) {
    std::vector<int> best(size_t(probs.rows()), 0);
    for (Index r = 0; r < probs.rows(); ++r) {
        for (Index s = 0; s < probs.cols(); ++s) {
            tr.stepProbs.push_back(float(probs(r, s)));
            if (probs(r, s) > probs(r, best[size_t(r)]))
                best[size_t(r)] = int(s);
        }
        tr.stepReadouts.push_back(best[size_t(r)]);
    }
    tr.stepAnswers.push_back(spelledAnswer(best.data(), int(probs.rows()), int(probs.cols())));
}

// How far a step moved row i of a state: |after_i - before_i| / |before_i| (Euclidean norms over the
// row), a state of norm 0 counting as 1e-12 (the change is then its size). Trace::change and halting
// by the change both read it.
template <typename BT, typename AT> double rowChange(const BT& before, const AT& after, Index i) {
    const double base = std::max(double(before.row(i).norm()), 1e-12);
    return double((after.row(i) - before.row(i)).norm()) / base;
}

// Appends one step's change of every position to a trace (Trace::change): rowChange of rows
// i < positions.
template <typename BT, typename AT>
void recordChange(const BT& before, const AT& after, int positions, Trace& tr) {
    for (Index i = 0; i < positions; ++i)
        tr.change.push_back(float(rowChange(before, after, i)));
}

// Whether a step left rows first..first+count-1 still: each one's change below `threshold` (the
// float comparison of halting.h's stopStep on the recorded change).
template <typename BT, typename AT>
bool rowsStill(const BT& before, const AT& after, Index first, Index count, double threshold) {
    for (Index i = first; i < first + count; ++i)
        if (!(float(rowChange(before, after, i)) < float(threshold)))
            return false;
    return true;
}

// The model `config.kind` names, not yet initialised. Throws std::invalid_argument on sizes it cannot
// build.
template <typename S>
std::unique_ptr<Model<S>> makeModel(const ModelConfig& config, int vocabSize, int symbols);

} // namespace ndr

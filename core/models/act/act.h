// The Universal Transformer with adaptive computation time (docs/design.md §2, "UT + ACT"), after
// Dehghani et al. (2019) and Graves (2016), as the authors' ACT encoder computes it: one shared
// Transformer layer, and before each step a halting unit p = sigmoid(w_p h + b_p) per position. A
// position runs until its cumulative p would pass haltAt (or the last step) and then halts with the
// remainder R = 1 - (the p of its earlier steps); its output is the weighted sum of its states after each
// step, with weights p for the steps before and R for the halting step. Every position's state keeps
// being updated after it halts (the others attend to it); only its output is fixed.
#pragma once

#include "core/models/act/kind.h"
#include "core/models/encoder/encoder.h"
#include "core/models/token_embedding.h"
#include "core/nn/model.h"
#include "core/nn/readout.h"

#include <vector>

namespace ndr {

template <typename S> class ActTransformer final : public Model<S> {
public:
    ActTransformer(const ModelConfig& config, int vocabSize, int symbols);

    void init(uint64_t seed) override;
    // At most `steps` steps; training and evaluation stop once every position has halted. The loss is
    // the mean cross-entropy plus ponderCost * the mean remainder (stats().gateCost). In evaluation
    // stats().haltSteps holds each example's steps: the most any of its positions ran.
    S forward(const Batch& batch, int steps, bool training, Rng& rng, bool keepCaches) override;
    void backward() override;
    const Mat<S>& logits() const override { return head_.logits; }
    // Runs all `steps` steps; Trace::gates holds each position's halting weight at each step (p before
    // its halting step, R at it, 0 after: they sum to 1), and the readouts after step t read the
    // weighted sum so far, divided by the weight so far.
    Trace trace(const std::vector<int>& tokens, int readouts, int steps, bool fullGates = false) override;
    double trainingFlops(const Batch& batch, int steps) const override;
    void setPackedRows(bool packed) override { packedRows_ = packed; }
    // Halting is the model's own: nothing to set.
    void setHalting(double, HaltSignal) override {}
    // The ponder cost is a mean over real positions, not examples.
    bool lossIsExampleMean() const override { return ac().ponderCost == 0; }

private:
    using Model<S>::cfg_, Model<S>::vocab_, Model<S>::symbols_, Model<S>::store_, Model<S>::stats_;
    const ActConfig& ac() const { return cfg_.template as<ActConfig>(); }
    void setShape();
    void embed(bool training, Rng& rng);
    // The halting unit before step t on state h: p (N) into haltP_[t], the weights of step t into
    // weight_[t]; updates the running positions' cumulative p, remainders and halting steps. Returns
    // whether a position is still running.
    bool halt(int t, int steps, const Mat<S>& h);

    EncoderLayer<S> layer_;
    int embedding_ = -1, wp_ = -1, bp_ = -1;
    ReadoutHead<S> head_;

    // State of the last forward.
    Batch batch_;
    BatchShape shape_;
    bool packedRows_ = true;
    std::vector<int> starts_;
    int ran_ = 0; // steps run
    bool kept_ = false;
    std::vector<Mat<S>> h_; // (ran + 1) x (N, C) states; two alternate without caches
    std::vector<typename EncoderLayer<S>::Cache> caches_;
    std::vector<AlignedVector<S>> haltP_, weight_; // (ran) x (N): p and the output weight of each step
    AlignedVector<S> cumulative_, remainder_;      // (N)
    std::vector<int> haltStep_;                    // (N) the step each row halted at (-1: running)
    std::vector<char> real_;                       // (N) row holds a real position
    Index realRows_ = 0;
    Mat<S> out_;              // (N, C) the weighted sum of the states
    TokenEmbedding<S> input_; // h0 from the tokens
    Mat<S> dOut_, dh_, dPrev_;
};

} // namespace ndr

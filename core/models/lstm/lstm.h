// The LSTM baseline of docs/design.md §2: token embeddings with dropout, one LSTM layer over each
// example's tokens without [B] and [E], and a linear readout of the output at its last token. Forward and
// backward through time are written by hand on Eigen.
#pragma once

#include "core/models/lstm/kind.h"
#include "core/nn/model.h"
#include "core/nn/readout.h"

#include <vector>

namespace ndr {

template <typename S> class Lstm final : public Model<S> {
public:
    Lstm(const ModelConfig& config, int vocabSize, int symbols);

    // PyTorch's defaults (as the paper's code): embeddings N(0, 1); every LSTM weight and both bias
    // vectors U(-1/sqrt(hidden), 1/sqrt(hidden)); the readout U(-1/sqrt(hidden), 1/sqrt(hidden)).
    void init(uint64_t seed) override;
    // `steps` does not apply: each example runs for as many time steps as it has tokens.
    S forward(const Batch& batch, int steps, bool training, Rng& rng, bool keepCaches) override;
    void backward() override;
    const Mat<S>& logits() const override { return head_.logits; }
    // steps = the number of tokens read (positions - 2), heads = 0, no attention and no gates; the
    // readout after step t is that of the output after the t-th token (step 0: the zero state).
    Trace trace(const std::vector<int>& tokens, int readouts, int steps, bool fullGates = false) override;
    double trainingFlops(const Batch& batch, int steps) const override;
    // Rows hold only real tokens whatever the flag says.
    void setPackedRows(bool) override {}
    void setHalting(double, HaltSignal) override {}
    bool lossIsExampleMean() const override { return true; } // the mean cross-entropy alone

private:
    using Model<S>::cfg_, Model<S>::vocab_, Model<S>::symbols_, Model<S>::store_, Model<S>::stats_;
    LstmConfig& tc() { return cfg_.template as<LstmConfig>(); }
    const LstmConfig& tc() const { return cfg_.template as<LstmConfig>(); }
    // The row layout of a batch: count_, rank_, offset_, tokens_ (see below).
    void arrange(const Batch& batch);

    int hidden_, embed_; // H, E
    int embedding_ = -1, wIh_ = -1, wHh_ = -1, bIh_ = -1, bHh_ = -1;
    // The shared readout; its rows are each example's output after its last token (B, H), zero for
    // an example without tokens.
    ReadoutHead<S> head_;

    // State of the last forward. Rows are time-major: the block of time step t holds the examples that
    // have a t-th token, in order of rank (examples ranked by token count, longest first, ties by
    // index). Each block is then a prefix of the block before it, and padding takes no rows.
    std::vector<int> count_;   // (B) tokens read per example: its length without [B] and [E]
    std::vector<int> rank_;    // (B) the example's row within each block
    std::vector<int> offset_;  // (steps + 1) first row of each time step's block; R = offset_.back()
    std::vector<int> tokens_;  // (R) the token of each row
    std::vector<int> targets_; // (B)
    bool kept_ = false;
    Mat<S> x_;                         // (R, E) embeddings after dropout
    Mat<S> xMask_;                     // (R, E) dropout multipliers (empty: no dropout)
    Mat<S> bias_;                      // (1, 4H) b_ih + b_hh
    Mat<S> gates_;                     // (R, 4H) [i f g o] after their sigmoid / tanh
    Mat<S> c_, tanhC_, h_;             // (R, H) cell, tanh(cell), output
    Mat<S> dH_, dC_, dG_, hPrev_, dX_; // backward temporaries, kept between calls
};

} // namespace ndr

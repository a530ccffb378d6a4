// The configurable encoder of docs/design.md §2: embedding (+ optional sinusoidal positions), one layer (or n
// separate layers) unrolled for n steps with softmax, relative or geometric attention and a residual or
// copy-gated update, and a readout on the [E] column. Every part is a hand-written forward/backward pair.
#pragma once

#include "core/config/config.h"
#include "core/config/model_kind.h"
#include "core/models/encoder/kind.h"
#include "core/models/encoder/layer_attention.h"
#include "core/models/token_embedding.h"
#include "core/nn/attention.h"
#include "core/nn/head_router.h"
#include "core/nn/model.h"
#include "core/nn/params.h"
#include "core/nn/readout.h"
#include "core/nn/relative_attention.h"
#include "core/records/records.h"
#include "core/task/task.h"

#include <memory>
#include <variant>
#include <vector>

namespace ndr {

// Whether an encoder's training steps run the last step's update on the rows read alone (Encoder::forward):
// unless the thought cost needs every row's gates.
inline bool updatesReadRowsLast(const EncoderConfig& m) {
    return !(copyGated(m.update) && m.thoughtCost > 0);
}

// The update after the attention, row by row (docs/design.md §2). Residual (vanilla):
//     out = LN2(z + Dropout(ff))
// Copy gate (NDR; the gated relative layer with tanh in place of LN2):
//     u = LN2(ff) or tanh(ff);  g = sigmoid(Wg2 Dropout(gate hidden) + bg2);  out = x + keep g (u - x)
// where z = LN1(x + Dropout(a)), ff = W2 Dropout(ReLU(W1 z + b1)) + b2 and keep is 0 where gate dropout
// copies the whole column. The FFN and the gate's first layer are the layer's ([W1; Wg1] is one product).
template <typename S> struct ResidualUpdate { int ln2g = -1, ln2b = -1; };
template <typename S> struct CopyGateUpdate {
    bool tanh = false;        // u = tanh(ff): no second layer norm
    int ln2g = -1, ln2b = -1; // u = LN2(ff)
    int wg2 = -1, bg2 = -1;   // the gate's second layer
};

// One layer: attention followed by the residual post-LN update or a copy-gated update.
template <typename S> struct EncoderLayer {
    struct Cache {
        typename LayerAttention<S>::Cache att;
        Mat<S> attMask; // (N, C) dropout multipliers on the attention output a (empty: no dropout)
        typename LayerNorm<S>::Cache ln1;
        Mat<S> z; // (N, C) LN1(x + drop(a))
        // (N, F) or (N, F + C): Dropout(ReLU([W1; Wg1] z + [b1 | bg1])). The backward needs no separate
        // mask or pre-dropout copy: where this is positive the ReLU passed and the multiplier was
        // hiddenKeep; everywhere else the gradient is zero.
        Mat<S> hiddenDropped;
        S hiddenKeep = 1; // 1/(1-p) in training with dropout, else 1
        Mat<S> ffMask;    // (N, C) residual only: dropout on the FFN output (empty: no dropout)
        typename LayerNorm<S>::Cache ln2;
        Mat<S> u;                            // (N, C) copy gate only: LN2(FFN(z)), or tanh(FFN(z))
        Mat<S> gate;                         // (N, C) copy gate: sigmoid(gate logits), before gate dropout
        AlignedVector<S> gateKeep;           // (N) 1, or 0 where gate dropout copies the whole column
        typename HeadRouter<S>::Cache route; // head routing only
        S routeEntropyCoef = 0;              // d loss / d (this step's mean routing entropy)
        AlignedVector<S> gateCost;           // (N) d loss / d g per gate element from the thought cost
        // With a forward on some rows only: those rows of x (empty: every row) and x's values there.
        // Every (N, ...) member after the attention's then has one row per entry of `rows`.
        std::vector<Index> rows;
        Mat<S> xRows;
    };

    // Temporaries of one forward or backward call, kept between calls so training allocates nothing.
    // The attention output a is one of them: the backward needs only its dropout mask.
    struct Workspace {
        Mat<S> att, y, ff, dHidden, du, dGateLogit, dff, dz, dy, da, dProj, dRoute;
        Mat<S> attRows, allMask, rowMask, dxRows, daRows; // forward or backward on some rows only
        AlignedVector<S> keepAll;
    };

    EncoderConfig cfg;
    mutable Workspace ws;
    LayerAttention<S> attention;
    HeadRouter<S> router; // declared only with head routing
    int ln1g = -1, ln1b = -1, w1 = -1, wg1 = -1, b1 = -1, bg1 = -1, w2 = -1, b2 = -1;
    std::variant<ResidualUpdate<S>, CopyGateUpdate<S>> update;

    bool gated() const { return std::holds_alternative<CopyGateUpdate<S>>(update); }
    void declare(ParamStore<S>& store, const std::string& prefix, const EncoderConfig& config);
    template <typename InitRng> void init(ParamStore<S>& store, InitRng& rng) const;
    // out (N, C) from x (N, C). With `rows`, out has those rows only, (rows.size(), C) in that order:
    // the attention reads every row, the update after it runs on these alone. Dropout draws its
    // multipliers for every row either way, so a row's output is the same as without `rows` up to
    // float rounding.
    void forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, bool training, Rng& rng,
                 Cache& c, Mat<S>& out, const std::vector<Index>* rows = nullptr) const;
    // dx (N, C) is assigned. After a forward on some rows, dOut has those rows only.
    void backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, Cache& c,
                  const Mat<S>& dOut, Mat<S>& dx) const;
    // Matrix-product FLOPs of one forward pass (backward costs twice this), with the update on
    // `updateRows` rows (negative: every row of the shape).
    double forwardFlops(const BatchShape& shape, double updateRows = -1) const;
    // The attention weights of a cache, per example (B, H, len_b, len_b) blocks.
    const AlignedVector<S>& attentionWeights(const Cache& c) const { return attention.weights(c.att); }

private:
    // The update's forward on the rows it runs on: out from x there (xu), c.z and the FFN output
    // ws.ff; the copy gate reads the gate's hidden columns of c.hiddenDropped. `rows`: those rows of x
    // (null: every one of its rowsAll rows).
    void residualForward(const ResidualUpdate<S>& r, ParamStore<S>& store, bool drop, Rng& rng, Cache& c,
                         const std::vector<Index>* rows, Index rowsAll, Mat<S>& out) const;
    void gateForward(const CopyGateUpdate<S>& g, ParamStore<S>& store, const Mat<S>& xu, bool training,
                     Rng& rng, Cache& c, const std::vector<Index>* rows, Index rowsAll, Mat<S>& out) const;
    // The update's backward from dOut: the gradient into the FFN's hidden activations (ws.dHidden's
    // columns) and into z (dz: assigned, residual) or into x (dxu: assigned, copy gate).
    void residualBackward(const ResidualUpdate<S>& r, ParamStore<S>& store, Cache& c, const Mat<S>& dOut,
                          Mat<S>& dz) const;
    void gateBackward(const CopyGateUpdate<S>& g, ParamStore<S>& store, const Mat<S>& xu, Cache& c,
                      const Mat<S>& dOut, Mat<S>& dxu) const;
};

template <typename S> class Encoder final : public Model<S> {
public:
    Encoder(const ModelConfig& config, int vocabSize, int symbols);

    // Fresh initialisation (docs/design.md §2: Xavier-uniform, gain sqrt(2) into ReLUs, embeddings N(0,1)).
    void init(uint64_t seed) override;

    // Runs `steps` steps on the batch and returns the mean cross-entropy against batch.targets.
    // With keepCaches the caches of every step are kept for backward(); otherwise memory stays at one step.
    S forward(const Batch& batch, int steps, bool training, Rng& rng, bool keepCaches) override;
    // Accumulates parameter gradients of the last forward (which must have kept its caches).
    void backward() override;
    // (B*R, S) logits of the last forward.
    const Mat<S>& logits() const override { return head_.logits; }

    // Runs one example for `steps` steps (evaluation mode) and records what the inspector shows.
    Trace trace(const std::vector<int>& tokens, int readouts, int steps, bool fullGates = false) override;

    // Matrix-product FLOPs of one training step (forward and backward) on this batch.
    double trainingFlops(const Batch& batch, int steps) const override;

    // Row layout of the activations (see BatchShape). Packed (the default) stores only the real
    // positions, so no row-wise work is spent on padding; padded is the plain layout, kept as the
    // reference the packed one is tested against. Both give the same results; dropout draws one
    // multiplier per stored row, so with dropout the two layouts draw different masks.
    void setPackedRows(bool packed) override { packedRows_ = packed; }
    void setHalting(double threshold, HaltSignal on) override {
        ec().haltThreshold = threshold;
        ec().haltOn = on;
    }
    // The routing entropy and the thought cost are means over real tokens, not examples.
    bool lossIsExampleMean() const override {
        return (!ec().headRouting || ec().routeEntropy == 0) &&
               (!copyGated(ec().update) || ec().thoughtCost == 0);
    }
    bool packedRows() const { return packedRows_; }
    // Whether the last step's update runs on the rows read alone (the default), or on every row
    // (the plain computation, kept as the reference the other is tested against). Both give the
    // same results up to float rounding.
    void setReadoutRowsOnly(bool only) { readoutRowsOnly_ = only; }

private:
    using Model<S>::cfg_, Model<S>::vocab_, Model<S>::symbols_, Model<S>::store_, Model<S>::stats_;
    EncoderConfig& ec() { return cfg_.template as<EncoderConfig>(); }
    const EncoderConfig& ec() const { return cfg_.template as<EncoderConfig>(); }
    EncoderLayer<S>& layer(int step) { return layers_[ec().sharedWeights ? 0 : step]; }
    const EncoderLayer<S>& layer(int step) const { return layers_[ec().sharedWeights ? 0 : step]; }
    void embed(const Batch& batch, bool training, Rng& rng);
    // After step t's layer forward (state `before` -> `h`): routing statistics, the loss terms'
    // gradient scales, and halting of the examples still running (returns true once every example
    // has halted).
    bool afterStep(int t, int steps, bool halting, const Mat<S>& before, const Mat<S>& h,
                   typename EncoderLayer<S>::Cache& c);
    // The thought cost of step t's gates and its gradient scale (copy-gated models).
    void addGateCost(int t, typename EncoderLayer<S>::Cache& c);
    void setShape(); // shape_ (and starts_) from batch_ and the row layout
    // Whether a forward (halting or not) runs the last step's update on the rows read alone.
    bool readsRowsOnly(bool halting) const {
        return readoutRowsOnly_ && !halting && updatesReadRowsLast(ec());
    }

    int embedding_ = -1;
    std::vector<EncoderLayer<S>> layers_;

    // State of the last forward.
    Batch batch_;
    BatchShape shape_;
    bool packedRows_ = true;
    bool readoutRowsOnly_ = true;
    bool readRowsOnly_ = false;   // the last forward's last step ran on the rows read alone
    std::vector<Index> readRows_; // (B*R) those rows of the state, example-major
    std::vector<int> starts_;     // (B + 1) first row of each example when packed
    int steps_ = 0;
    bool kept_ = false;
    std::vector<Mat<S>> h_; // (steps + 1) x (N, C) states
    std::vector<typename EncoderLayer<S>::Cache> caches_;
    TokenEmbedding<S> input_; // h0 from the tokens
    Index realRows_ = 0;      // real positions of the batch
    ReadoutHead<S> head_;     // the rows read after the last step (or the halting step), logits, probs
    Mat<S> dh_, dPrev_;       // backward temporaries, kept between steps
};

} // namespace ndr

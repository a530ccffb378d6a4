// ThoughtNet (docs/design.md §2): a variable-time network. Tokens are expanded into a state; at each
// step K learned operators and a hard-coded zero operator (the identity) are mixed per token by a
// softmax operator selector; at evaluation an example stops at its fixed point, once the learned
// operators' total weight is below a threshold at every token. Every part is a hand-written
// forward/backward pair.
#pragma once

#include "core/config/config.h"
#include "core/models/thoughtnet/kind.h"
#include "core/nn/attention.h"
#include "core/nn/model.h"
#include "core/nn/params.h"
#include "core/nn/readout.h"

#include <vector>

namespace ndr {

// One learned operator on x = [h | positions] (N, C + P):
//   u = x Win^T + bin; a = MultiHeadAttention(u); z = tanh(a W1^T + b1);
//   o = tanh(z W2^T + h R^T + b2)
// The current state h feeds the final layer directly (R), so an operator can carry attributes over.
template <typename S> struct ThoughtOperator {
    struct Cache {
        Mat<S> u, a, z, o; // (N, C), (N, C), (N, F), (N, C)
        typename SoftmaxAttention<S>::Cache att;
    };
    struct Workspace {
        Mat<S> dPre, dz, da, du, scratch;
    };

    int channels = 0, hidden = 0; // C, F
    SoftmaxAttention<S> attention;
    int win = -1, bin = -1, w1 = -1, b1 = -1, w2 = -1, r = -1, b2 = -1;
    mutable Workspace ws;

    void declare(ParamStore<S>& store, const std::string& prefix, int c, int p, int f, int heads);
    template <typename InitRng> void init(ParamStore<S>& store, InitRng& rng) const;
    // x (N, C + P); h = x's first C columns. c.o is the output.
    void forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, Cache& c) const;
    // dOut (N, C); dx (N, C + P) is added to (the h columns get the R path too).
    void backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, const Cache& c,
                  const Mat<S>& dOut, Mat<S>& dx) const;
};

// The operator selector: s = softmax(tanh(x Ws1^T + bs1) Ws2^T + bs2), (N, K + 1); column 0 is the
// zero operator's weight.
template <typename S> struct OperatorSelector {
    struct Cache {
        Mat<S> q, s; // (N, F), (N, K + 1)
    };
    int ws1 = -1, bs1 = -1, ws2 = -1, bs2 = -1;
    mutable Mat<S> dLogit, dq;

    void declare(ParamStore<S>& store, int in, int hidden, int choices);
    template <typename InitRng> void init(ParamStore<S>& store, InitRng& rng) const;
    void forward(ParamStore<S>& store, const Mat<S>& x, Cache& c) const;
    // dS (N, K + 1) is d loss / d s; dx (N, in) is added to.
    void backward(ParamStore<S>& store, const Mat<S>& x, const Cache& c, const Mat<S>& dS, Mat<S>& dx) const;
};

template <typename S> class ThoughtNet final : public Model<S> {
public:
    ThoughtNet(const ModelConfig& config, int vocabSize, int symbols);

    void init(uint64_t seed) override;

    // Runs `steps` iterations; loss = mean cross-entropy of the readouts + urgency * thought cost, the
    // thought cost of an example being sum_t t * (learned operators' weight summed over its tokens),
    // averaged over the batch (stats().gateCost holds it before the urgency). In evaluation with a
    // halt threshold each example stops at its fixed point (stats().haltSteps).
    S forward(const Batch& batch, int steps, bool training, Rng& rng, bool keepCaches) override;
    void backward() override;
    const Mat<S>& logits() const override { return head_.logits; }
    // Also records the selector's weights per step (Trace::selection), the learned operators' total
    // weight per position as its gates (the share of the state they replace, so gate halting reads
    // ThoughtNet's fixed point), and each operator's attention as heads K*H (operator k's head h at
    // k*H + h).
    Trace trace(const std::vector<int>& tokens, int readouts, int steps, bool fullGates = false) override;
    double trainingFlops(const Batch& batch, int steps) const override;
    void setPackedRows(bool) override {} // always packed: only real positions are stored
    void setHalting(double threshold, HaltSignal on) override {
        tc().haltThreshold = threshold;
        tc().haltOn = on;
    }
    // The mean cross-entropy and the thought cost, a mean over the batch's examples.
    bool lossIsExampleMean() const override { return true; }

private:
    using Model<S>::cfg_, Model<S>::vocab_, Model<S>::symbols_, Model<S>::store_, Model<S>::stats_;
    ThoughtNetConfig& tc() { return cfg_.template as<ThoughtNetConfig>(); }
    const ThoughtNetConfig& tc() const { return cfg_.template as<ThoughtNetConfig>(); }
    struct StepCache {
        Mat<S> x; // (N, C + P) [h | positions]
        std::vector<typename ThoughtOperator<S>::Cache> ops;
        typename OperatorSelector<S>::Cache sel;
    };
    void setShape(const Batch& batch);
    void step(const Mat<S>& h, StepCache& c, Mat<S>& out);

    int K_, C_, P_;
    int embedding_ = -1;
    std::vector<ThoughtOperator<S>> ops_;
    OperatorSelector<S> selector_;

    Batch batch_;
    BatchShape shape_;
    std::vector<int> starts_;
    int steps_ = 0;
    bool kept_ = false;
    std::vector<Mat<S>> h_; // (steps + 1) x (N, C)
    std::vector<StepCache> caches_;
    Mat<S> positions_; // (T, P) sinusoids of the positions seen so far
    ReadoutHead<S> head_;
    std::vector<S> costScale_; // (steps) d loss / d (a learned operator's weight) at each step
    Mat<S> dh_, dPrev_, dx_, dS_;
};

} // namespace ndr

// Relative positional multi-head attention (Transformer-XL style) and its abs/rel variant, docs/design.md
// §2: the attention of the "+rel", "+rel+gate" and "+abs/rel+gate" models, over a padded or packed batch.
#pragma once

#include "core/nn/attention.h"

namespace ndr {

// Per head h (D = C/H channels), query i, key j, offset p = j - i:
//   q_i = Wq x_i, k_j = Wk x_j, v_j = Wv x_j;  r(p) = Wr PE(p) for p = -(T-1)..T-1
//   score_ij = s [(q_i + u_h) . drop(k_j) + (q_i + v_h) . drop(r(j - i))]
// and with abs/rel the position term is c_ih (q_i + v_h) . drop(r(j - i)) + (1 - c_ih) (q_i + v_h) .
// drop(r(j)), c_ih = sigmoid(Wag x_i + bag). Softmax over the real keys; out = Wo concat_h(sum_j a_ij v_j).
// Parameters, [Wq; Wkv; Wag] consecutive so that one product projects all of them:
//   Wq (C, C), Wkv (2C, C), Wag (H, C) and gateBias (1, H) (abs/rel only), Wr (C, C),
//   contentBias (1, C) = u_h per head, positionBias (1, C) = v_h per head, scale (1, 1) = s, Wo (C, C).
template <typename S> struct RelativeAttention {
    struct Params {
        int wq = -1, wkv = -1, wag = -1, gateBias = -1, wr = -1, contentBias = -1, positionBias = -1,
            scale = -1, wo = -1;
    };
    struct Cache {
        Mat<S> proj;             // (N, 3C [+ H]): [q | k (dropped out) | v | abs/rel gate logits]
        Mat<S> keyMask;          // (N, C) dropout multipliers applied to k (empty: no dropout)
        Mat<S> pos;              // (2T-1, C) drop(r(p)), row p + T - 1
        Mat<S> posMask;          // (2T-1, C) dropout multipliers applied to r (empty: no dropout)
        Mat<S> absGate;          // (N, H) c_ih (abs/rel only)
        AlignedVector<S> raw;    // (B, H, T, T) score_ij / s
        AlignedVector<S> posDot; // (B, H, T, 2T-1) (q_i + v_h) . drop(r(m - len + 1)), m < 2 len - 1
        AlignedVector<S> att;    // (B, H, T, T) softmax weights
        Mat<S> mixed;            // (N, C) concat_h sum_j a_ij v_j
        Mat<S> routed;           // (N, C) mixed scaled per head by the routing weights (empty: no routing)
    };

    // Per-(example, head) buffers of one OpenMP thread, kept between calls.
    struct Scratch {
        AlignedVector<S> qu, qv, dqv, dA, dPosDot; // (T, D), (T, D), (T, D), (T, T), (T, 2T-1)
        Mat<S> dPos;                               // (2T-1, C) this thread's share of d loss / d drop(r)
        RowVec<S> du, dv;                          // (C) this thread's share of d loss / d u, d v
    };

    Params p;
    int channels = 0, heads = 0;
    bool absRel = false;
    mutable Mat<S> dMixed, dPos;          // backward temporaries, kept to avoid reallocation
    mutable std::vector<Scratch> scratch; // one per thread
    mutable AlignedVector<S> projBias;    // (3C + H) [0 | 0 | 0 | bag], the bias row of proj (abs/rel)
    mutable Mat<S> encoding;              // (2 Tmax - 1, C) PE(p), row p + Tmax - 1: computed once per Tmax
    mutable int encodingT = 0;            // Tmax

    void declare(ParamStore<S>& store, const std::string& prefix, int c, int h, bool absRelGate);
    template <typename InitRng> void init(ParamStore<S>& store, InitRng& rng) const;
    // out (N, C); x (N, C). keyDropout acts on the projected keys and position vectors.
    void forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, bool training,
                 double keyDropout, Rng& rng, Cache& c, Mat<S>& out,
                 const Mat<S>* headWeights = nullptr) const;
    // dx (N, C) is assigned, or added to when accumulateDx; parameter gradients accumulate. With head
    // routing, headWeights (N, H) are the forward's and dHeadWeights receives their gradient.
    void backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, const Cache& c,
                  const Mat<S>& dOut, Mat<S>& dx, Mat<S>& scratch, bool accumulateDx = false,
                  const Mat<S>* headWeights = nullptr, Mat<S>* dHeadWeights = nullptr) const;

    // The (2T-1, C) rows PE(-(T-1)) .. PE(T-1) of `encoding`, which grows when T exceeds Tmax.
    const S* positionEncoding(int T) const;
};

// The formula above with plain loops over b, h, i, j, c: the oracle of the fast layer. The dropout
// multipliers of a training forward (the cache's keyMask and posMask) may be given to replay it; att
// (B, H, T, T) receives the weights when not null.
template <typename S>
void relativeAttentionNaive(ParamStore<S>& store, const RelativeAttention<S>& layer, const Mat<S>& x,
                            const BatchShape& shape, const Mat<S>* keyMask, const Mat<S>* posMask,
                            Mat<S>& out, std::vector<S>* att = nullptr);

template <typename S>
template <typename InitRng>
void RelativeAttention<S>::init(ParamStore<S>& store, InitRng& rng) const {
    xavierUniform<S>(store.value(p.wq), 1.0, rng);
    xavierUniform<S>(store.value(p.wkv), 1.0, rng);
    if (absRel) {
        xavierUniform<S>(store.value(p.wag), 1.0, rng);
        store.value(p.gateBias).setZero();
    }
    xavierUniform<S>(store.value(p.wr), 1.0, rng);
    store.value(p.contentBias).setZero();
    store.value(p.positionBias).setZero();
    store.value(p.scale)(0, 0) = S(1.0 / std::sqrt(double(channels / heads)));
    xavierUniform<S>(store.value(p.wo), 1.0, rng);
}

} // namespace ndr

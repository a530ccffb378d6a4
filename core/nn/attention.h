// Multi-head self-attention in the two flavours of docs/design.md §2: softmax (vanilla Transformer) and
// directional geometric attention (NDR), each a forward/backward pair over a padded or packed batch
// (BatchShape).
#pragma once

#include "core/nn/layers.h"
#include "core/nn/params.h"
#include "core/nn/small_products.h"

#include <algorithm>
#include <vector>

namespace ndr {

// Where the rows of a batch's (N, C) activations live. Padded: example b owns rows b*T .. b*T+T-1 and
// rows from b*T + lengths[b] are padding (N = B*T). Packed (starts given): example b owns rows
// starts[b] .. starts[b+1]-1, exactly its real positions, so row-wise work skips the padding
// (N = starts[B]). The attention maps stay (B, H, T, T) in both.
struct BatchShape {
    int batch = 0, positions = 0; // B, T (the longest length)
    const int* lengths = nullptr; // (B) real lengths
    const int* starts = nullptr;  // (B + 1) first row of each example; null: padded layout

    Index start(int b) const { return starts ? Index(starts[b]) : Index(b) * positions; }
    // Rows that example b owns: its real positions, plus padding in the padded layout.
    Index span(int b) const { return starts ? Index(lengths[b]) : Index(positions); }
    Index rows() const { return starts ? Index(starts[batch]) : Index(batch) * positions; }
};

// --- The geometric attention kernel for one (example, head): scores (T, T) row-major -> A (T, T).
// Keys j >= len and j == i are masked; query rows i >= len are left at zero.
// A_ij = sigmoid(s_ij) * prod_{k closer to i than j} (1 - sigmoid(s_ik)), computed in log space with a
// prefix sum of log(1 - P) so each row costs O(T) instead of O(T^2).
template <typename S> void geometricForward(const S* scores, int T, int len, S* att);
// Backward of geometricForward: ds (T, T) = d loss / d scores given dA and the cached A.
template <typename S>
void geometricBackward(const S* scores, const S* att, const S* dAtt, int T, int len, S* dScores);

// Zeroes every entry of a (T, T) map outside its (len, len) block, so an attention tensor's padding reads
// as zero without clearing the whole tensor at every step.
template <typename S> void zeroOutsideBlock(S* m, int T, int len) {
    if (len >= T)
        return;
    for (int i = 0; i < len; ++i)
        std::fill(m + size_t(i) * T + len, m + size_t(i + 1) * T, S(0));
    std::fill(m + size_t(len) * T, m + size_t(T) * T, S(0));
}

// Buffers of the two one-block kernels below, kept by the caller between calls.
template <typename S> struct GeometricWork {
    AlignedVector<S> a, b; // (T, T) each
    std::vector<S> prefix; // (T + 1)
};
// The same two kernels without allocation. The forward also returns logP (T, T) = log sigmoid(scores),
// which is all the backward needs of the scores (sigmoid(s) = exp(logP)).
template <typename S>
void geometricForward(const S* scores, int T, int len, S* att, S* logP, GeometricWork<S>& work);
template <typename S>
void geometricBackwardFromLogP(const S* logP, const S* att, const S* dAtt, int T, int len, S* dScores,
                               GeometricWork<S>& work);
// The two kernels' row scans, for callers that apply the transcendental functions to many blocks at
// once. Log space: logA (T, T) = log P_ij + sum over keys k closer to i than j of logQ_ik, with logP =
// log sigmoid(s) and logQ = log(1 - sigmoid(s)); -inf on the diagonal; entries beyond len untouched;
// prefix: len + 1 values of scratch.
template <typename S> void geometricLogScan(const S* logP, const S* logQ, int T, int len, S* logA, S* prefix);
// ds (T, T) = d loss / d scores from g = dA * A (d loss / d log A) and sigPos = sigmoid(s); zero on the
// diagonal; entries beyond len untouched; prefix: len + 1 values of scratch.
template <typename S> void geometricScoreGrad(const S* g, const S* sigPos, int T, int len, S* ds, S* prefix);
// The O(T^3) formula, straight from the definition; the oracle for the kernels above.
template <typename S> void geometricNaive(const S* scores, int T, int len, S* att);
// Tensors closer to i than j (docs/design.md §2): |k-i| < |j-i|, or equal distance and k > j.
inline bool geometricCloser(int i, int j, int k) {
    const int dk = k > i ? k - i : i - k, dj = j > i ? j - i : i - j;
    return dk < dj || (dk == dj && k > j);
}

// Directional geometric attention (docs/design.md §2). Parameters, consecutive so [Wq; Wkv; Wqp] is one
// matrix:
//   Wq (C, C), Wkv (2C, C), Wqp (2H, C); qBias (1, C) = c_h; posBias (1, 2H) = bqp;
//   scalars (1, 3) = [alpha, rho, gamma]; Wo (C, C).
template <typename S> struct GeometricAttention {
    struct Params {
        int wq = -1, wkv = -1, wqp = -1, qBias = -1, posBias = -1, scalars = -1, wo = -1;
    };
    struct Cache {
        Mat<S> proj;    // (N, 3C + 2H): [q + c | k (dropped out) | v | (b, f) per head]
        Mat<S> keyMask; // (N, C) dropout multipliers applied to k (empty: no key dropout)
        // The maps of example b are H blocks of (len_b, len_b), row stride len_b, from blocks[b]: only the
        // real positions, so no work or memory goes to padding (a batch's T can be several times len_b).
        std::vector<size_t> blocks; // (B + 1) first element of each example's maps
        AlignedVector<S> dot;       // q_i . k_j
        AlignedVector<S> logP;      // log sigmoid(s_ij), for the backward
        AlignedVector<S> att;       // A after normalisation (what is applied to v)
        AlignedVector<S> rowSum;    // (B, H, T) sum_j A_ij before L1 normalisation (only with L1)
        Mat<S> mixed;               // (N, C) concat_h sum_j A_ij v_j
        Mat<S> routed;              // (N, C) mixed scaled per head by the routing weights (empty: no routing)
    };

    // Buffers of one OpenMP thread, kept between calls.
    struct Scratch {
        std::vector<S> prefix; // (len + 1) a row scan's running sums
    };

    Params p;
    int channels = 0, heads = 0;
    bool normalizeL1 = false;
    mutable Mat<S> dMixed; // backward temporary, kept to avoid reallocation
    // Temporaries over every block of a batch (laid out as the cache's maps), so that each
    // transcendental function is one vectorised pass over the batch: forward logQ; backward g = dA * A
    // (first dA), sigmoid(s), ds, and the unnormalised A with L1.
    mutable AlignedVector<S> logQ, gAll, sigAll, dsAll, rawAll;
    mutable std::vector<Scratch> scratch; // one per thread
    mutable AlignedVector<S> projBias;    // (3C + 2H) [c | 0 | 0 | bqp], the bias row of proj

    void declare(ParamStore<S>& store, const std::string& prefix, int c, int h, bool l1);
    template <typename InitRng> void init(ParamStore<S>& store, InitRng& rng) const;
    // out (N, C); x (N, C)
    void forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, bool training,
                 double keyDropout, Rng& rng, Cache& c, Mat<S>& out,
                 const Mat<S>* headWeights = nullptr) const;
    // dx (N, C) is assigned, or added to when accumulateDx; parameter gradients accumulate. With head
    // routing, headWeights (N, H) are the forward's and dHeadWeights receives their gradient.
    void backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, const Cache& c,
                  const Mat<S>& dOut, Mat<S>& dx, Mat<S>& scratch, bool accumulateDx = false,
                  const Mat<S>* headWeights = nullptr, Mat<S>* dHeadWeights = nullptr) const;
};

// Softmax multi-head attention without biases (as the released code's baseline):
//   Wq (C, C), Wkv (2C, C), Wo (C, C); attention dropout on the attention weights.
template <typename S> struct SoftmaxAttention {
    struct Params {
        int wq = -1, wkv = -1, wo = -1;
    };
    struct Cache {
        Mat<S> proj; // (N, 3C): [q | k | v]
        // Softmax weights: example b's H maps are (len_b, len_b) blocks from blocks[b], as in
        // GeometricAttention's cache.
        std::vector<size_t> blocks;
        AlignedVector<S> att;
        AlignedVector<S> drop; // (B, H, T, T) dropout multipliers on the weights (empty: none)
        Mat<S> mixed;          // (N, C)
        Mat<S> routed;         // (N, C) mixed scaled per head by the routing weights (empty: no routing)
    };

    struct Scratch {
        AlignedVector<S> dA, dropped; // (len, len) each
    };

    Params p;
    int channels = 0, heads = 0;
    mutable Mat<S> dMixed;                // backward temporary, kept to avoid reallocation
    mutable std::vector<Scratch> scratch; // one per thread

    void declare(ParamStore<S>& store, const std::string& prefix, int c, int h);
    template <typename InitRng> void init(ParamStore<S>& store, InitRng& rng) const;
    void forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, bool training,
                 double attDropout, Rng& rng, Cache& c, Mat<S>& out,
                 const Mat<S>* headWeights = nullptr) const;
    void backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, const Cache& c,
                  const Mat<S>& dOut, Mat<S>& dx, Mat<S>& scratch, bool accumulateDx = false,
                  const Mat<S>* headWeights = nullptr, Mat<S>* dHeadWeights = nullptr) const;
};

// Xavier-uniform initialisation of a (out, in) weight with the given gain.
template <typename S, typename WT, typename InitRng> void xavierUniform(WT&& w, double gain, InitRng& rng) {
    const double bound = gain * std::sqrt(6.0 / double(w.rows() + w.cols()));
    std::uniform_real_distribution<double> u(-bound, bound);
    for (Index i = 0; i < w.rows(); ++i)
        for (Index j = 0; j < w.cols(); ++j)
            w(i, j) = S(u(rng));
}

template <typename S>
template <typename InitRng>
void GeometricAttention<S>::init(ParamStore<S>& store, InitRng& rng) const {
    xavierUniform<S>(store.value(p.wq), 1.0, rng);
    xavierUniform<S>(store.value(p.wkv), 1.0, rng);
    xavierUniform<S>(store.value(p.wqp), 1.0, rng);
    store.value(p.qBias).setZero();
    store.value(p.posBias).setZero();
    auto sc = store.value(p.scalars);
    sc(0, 0) = S(1.0 / std::sqrt(double(channels / heads))); // alpha
    sc(0, 1) = S(1);                                         // rho
    sc(0, 2) = S(0);                                         // gamma
    xavierUniform<S>(store.value(p.wo), 1.0, rng);
}

template <typename S>
template <typename InitRng>
void SoftmaxAttention<S>::init(ParamStore<S>& store, InitRng& rng) const {
    xavierUniform<S>(store.value(p.wq), 1.0, rng);
    xavierUniform<S>(store.value(p.wkv), 1.0, rng);
    xavierUniform<S>(store.value(p.wo), 1.0, rng);
}

} // namespace ndr

// The softmax attention layer (the Transformer's): forward and backward.
#include "core/nn/attention.h"
#include "core/nn/attention_maps.h"
#include "core/nn/head_router.h"
#include "core/nn/scalars.h"

#include <algorithm>
#include <cmath>
#include <omp.h>

namespace ndr {

using namespace attention_maps;

namespace {

// out (len, len) = a (len, len) * m, where the multipliers m have row stride T.
template <typename S> void applyMultipliers(const S* a, const S* m, int len, int T, S* out) {
    for (int i = 0; i < len; ++i)
        for (int j = 0; j < len; ++j)
            out[size_t(i) * len + j] = a[size_t(i) * len + j] * m[size_t(i) * T + j];
}

} // namespace

template <typename S>
void SoftmaxAttention<S>::declare(ParamStore<S>& store, const std::string& prefix, int c, int h) {
    channels = c;
    heads = h;
    p.wq = store.add(prefix + "att.wq", c, c);
    p.wkv = store.add(prefix + "att.wkv", 2 * c, c);
    p.wo = store.add(prefix + "att.wo", c, c);
}

template <typename S>
void SoftmaxAttention<S>::forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape,
                                  bool training, double attDropout, Rng& rng, Cache& c, Mat<S>& out,
                                  const Mat<S>* headWeights) const {
    const int B = shape.batch, T = shape.positions, C = channels, H = heads, D = C / H;
    const Index N = shape.rows(), P = 3 * C;
    const S scale = S(1.0 / std::sqrt(double(D)));
    linearForward<S>(x, store.valueRows(p.wq, p.wkv), c.proj);
    const size_t TT = size_t(T) * T;
    setMapBlocks(shape, H, c.blocks);
    const size_t total = c.blocks[B];
    c.att.resize(total);
    const bool drop = training && attDropout > 0;
    // Drawn serially, before the parallel loop, so the stream does not depend on thread count. One
    // multiplier per (example, head, i, j < T), as the maps' padded shape has.
    if (drop) {
        c.drop.resize(size_t(B) * H * TT);
        dropoutFill(c.drop.data(), Index(c.drop.size()), attDropout, rng);
    } else {
        c.drop.clear();
    }
    c.mixed.resize(N, C);
    scratch.resize(std::max<size_t>(scratch.size(), size_t(omp_get_max_threads())));

    const bool splitExamples = splitOverExamples(B);
    // 1. Every block's scores, less their row's maximum
#pragma omp parallel for if (splitExamples) schedule(static)
    for (int b = 0; b < B; ++b) {
        const int len = shape.lengths[b];
        const size_t LL = size_t(len) * len;
        const S* rows = c.proj.data() + shape.start(b) * P;
        for (int h = 0; h < H; ++h) {
            S* A = c.att.data() + c.blocks[b] + size_t(h) * LL;
            const Block<const S> q{rows + h * D, len, D, P}, k{rows + C + h * D, len, D, P};
            productABt<S>(q, k, scale, Block<S>{A, len, len, len});
            for (int i = 0; i < len; ++i) {
                S* row = A + size_t(i) * len;
                S mx = row[0];
                for (int j = 1; j < len; ++j)
                    mx = std::max(mx, row[j]);
                for (int j = 0; j < len; ++j)
                    row[j] -= mx;
            }
        }
    }
    // 2. exp: one vectorised pass over the batch
    expInPlace(c.att.data(), Index(total));
    // 3. Each row divided by its sum; mixed = Dropout(A) v
#pragma omp parallel for if (splitExamples) schedule(static)
    for (int b = 0; b < B; ++b) {
        Scratch& w = scratch[omp_get_thread_num()];
        const int len = shape.lengths[b];
        const size_t LL = size_t(len) * len;
        const S* rows = c.proj.data() + shape.start(b) * P;
        c.mixed.middleRows(shape.start(b) + len, shape.span(b) - len).setZero();
        for (int h = 0; h < H; ++h) {
            const Block<const S> v{rows + 2 * C + h * D, len, D, P};
            S* A = c.att.data() + c.blocks[b] + size_t(h) * LL;
            for (int i = 0; i < len; ++i) {
                S* row = A + size_t(i) * len;
                S sum = 0;
                for (int j = 0; j < len; ++j)
                    sum += row[j];
                for (int j = 0; j < len; ++j)
                    row[j] /= sum;
            }
            const S* applied = A;
            if (drop) {
                w.dropped.resize(LL);
                applyMultipliers(A, c.drop.data() + (size_t(b) * H + h) * TT, len, T, w.dropped.data());
                applied = w.dropped.data();
            }
            productAB<S>(Block<const S>{applied, len, len, len}, v, S(1),
                         Block<S>{c.mixed.data() + shape.start(b) * C + h * D, len, D, C}, false);
        }
    }
    projectHeads<S>(c.mixed, headWeights, store.value(p.wo), c.routed, out);
}

template <typename S>
void SoftmaxAttention<S>::backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape,
                                   const Cache& c, const Mat<S>& dOut, Mat<S>& dx, Mat<S>& dProj,
                                   bool accumulateDx, const Mat<S>* headWeights, Mat<S>* dHeadWeights) const {
    const int B = shape.batch, T = shape.positions, C = channels, H = heads, D = C / H;
    const Index N = shape.rows(), P = 3 * C;
    const S scale = S(1.0 / std::sqrt(double(D)));
    // out = mixed Wo^T (routed: mixed scaled per head)
    projectHeadsBackward<S>(dOut, c.mixed, c.routed, store.value(p.wo), store.grad(p.wo), headWeights, dMixed,
                            dHeadWeights);
    const size_t TT = size_t(T) * T;
    // Every entry of dProj is assigned below (padded rows set to zero), so no clearing pass.
    dProj.resize(N, P);
    const bool drop = !c.drop.empty();
    scratch.resize(std::max<size_t>(scratch.size(), size_t(omp_get_max_threads())));

#pragma omp parallel for if (splitOverExamples(B)) schedule(static)
    for (int b = 0; b < B; ++b) {
        Scratch& w = scratch[omp_get_thread_num()];
        const int len = shape.lengths[b];
        const size_t LL = size_t(len) * len;
        w.dA.resize(LL);
        if (drop)
            w.dropped.resize(LL);
        const S* rows = c.proj.data() + shape.start(b) * P;
        S* dRows = dProj.data() + shape.start(b) * P;
        dProj.middleRows(shape.start(b) + len, shape.span(b) - len).setZero();
        for (int h = 0; h < H; ++h) {
            const Block<const S> q{rows + h * D, len, D, P}, k{rows + C + h * D, len, D, P},
                v{rows + 2 * C + h * D, len, D, P};
            const Block<const S> dm{dMixed.data() + shape.start(b) * C + h * D, len, D, C};
            const S* A = c.att.data() + c.blocks[b] + size_t(h) * LL;
            const S* m = drop ? c.drop.data() + (size_t(b) * H + h) * TT : nullptr; // row stride T
            const S* applied = A;
            if (drop) {
                applyMultipliers(A, m, len, T, w.dropped.data());
                applied = w.dropped.data();
            }
            S* dA = w.dA.data();
            // mixed = (A * mask) v
            productABt<S>(dm, v, S(1), Block<S>{dA, len, len, len});
            productAtB<S>(Block<const S>{applied, len, len, len}, dm, S(1),
                          Block<S>{dRows + 2 * C + h * D, len, D, P}, false);
            // softmax: ds_ij = A_ij (dA_ij - sum_k dA_ik A_ik), with dA already multiplied by the mask
            for (int i = 0; i < len; ++i) {
                S* dai = dA + size_t(i) * len;
                const S* ai = A + size_t(i) * len;
                if (drop)
                    for (int j = 0; j < len; ++j)
                        dai[j] *= m[size_t(i) * T + j];
                S inner = 0;
                for (int j = 0; j < len; ++j)
                    inner += dai[j] * ai[j];
                for (int j = 0; j < len; ++j)
                    dai[j] = ai[j] * (dai[j] - inner);
            }
            const Block<const S> ds{dA, len, len, len};
            productAB<S>(ds, k, scale, Block<S>{dRows + h * D, len, D, P}, false);
            productAtB<S>(ds, q, scale, Block<S>{dRows + C + h * D, len, D, P}, false);
        }
    }
    linearBackward<S>(dProj, x, store.valueRows(p.wq, p.wkv), store.gradRows(p.wq, p.wkv), &dx, accumulateDx);
}

#define NDR_INSTANTIATE(S) template struct SoftmaxAttention<S>;
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr

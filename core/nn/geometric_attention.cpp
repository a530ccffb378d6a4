// The directional geometric attention layer: forward and backward (its kernel is in
// geometric_kernel.cpp).
#include "core/nn/attention.h"
#include "core/nn/attention_maps.h"
#include "core/nn/head_router.h"
#include "core/nn/scalars.h"

#include <algorithm>
#include <cmath>
#include <omp.h>

namespace ndr {

using namespace attention_maps;

template <typename S>
void GeometricAttention<S>::declare(ParamStore<S>& store, const std::string& prefix, int c, int h, bool l1) {
    channels = c;
    heads = h;
    normalizeL1 = l1;
    p.wq = store.add(prefix + "att.wq", c, c);
    p.wkv = store.add(prefix + "att.wkv", 2 * c, c);
    p.wqp = store.add(prefix + "att.wqp", 2 * h, c);
    p.qBias = store.add(prefix + "att.content_bias", 1, c);
    p.posBias = store.add(prefix + "att.direction_bias", 1, 2 * h);
    p.scalars = store.add(prefix + "att.alpha_rho_gamma", 1, 3);
    p.wo = store.add(prefix + "att.wo", c, c);
}

template <typename S>
void GeometricAttention<S>::forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape,
                                    bool training, double keyDropout, Rng& rng, Cache& c, Mat<S>& out,
                                    const Mat<S>* headWeights) const {
    const int B = shape.batch, T = shape.positions, C = channels, H = heads, D = C / H;
    const Index N = shape.rows(), P = 3 * C + 2 * H;
    // proj (N, 3C + 2H) = x [Wq; Wkv; Wqp]^T + [c | 0 | 0 | bqp]
    projBias.assign(size_t(P), S(0));
    std::copy(store.valuePtr(p.qBias), store.valuePtr(p.qBias) + C, projBias.begin());
    std::copy(store.valuePtr(p.posBias), store.valuePtr(p.posBias) + 2 * H, projBias.begin() + 3 * C);
    linearForwardBias<S>(x, store.valueRows(p.wq, p.wqp), projBias.data(), c.proj);
    if (training && keyDropout > 0) {
        dropoutMask(c.keyMask, N, C, keyDropout, training, rng);
        c.proj.middleCols(C, C).array() *= c.keyMask.array();
    } else {
        c.keyMask.resize(0, 0);
    }

    const auto sc = store.value(p.scalars);
    const S alpha = sc(0, 0), rho = sc(0, 1), gamma = sc(0, 2);
    setMapBlocks(shape, H, c.blocks);
    c.dot.resize(c.blocks[B]);
    c.logP.resize(c.blocks[B]);
    c.att.resize(c.blocks[B]);
    if (normalizeL1)
        c.rowSum.assign(size_t(B) * H * T, S(0));
    c.mixed.resize(N, C);
    scratch.resize(std::max<size_t>(scratch.size(), size_t(omp_get_max_threads())));

    const size_t total = c.blocks[B];
    logQ.resize(total);
    const bool splitExamples = splitOverExamples(B);
    // 1. Every block's scores (into logQ): s_ij = alpha q_i.k_j + rho (f_i if j > i, b_i if j <= i) + gamma
#pragma omp parallel for if (splitExamples) schedule(static)
    for (int b = 0; b < B; ++b) {
        const int len = shape.lengths[b];
        const size_t LL = size_t(len) * len;
        const S* rows = c.proj.data() + shape.start(b) * P;
        for (int h = 0; h < H; ++h) {
            const size_t base = c.blocks[b] + size_t(h) * LL;
            const Block<const S> q{rows + h * D, len, D, P}, k{rows + C + h * D, len, D, P};
            S* dot = c.dot.data() + base;
            productABt<S>(q, k, S(1), Block<S>{dot, len, len, len});
            for (int i = 0; i < len; ++i) {
                const S back = rows[Index(i) * P + 3 * C + 2 * h];    // prefer left (j < i)
                const S fwd = rows[Index(i) * P + 3 * C + 2 * h + 1]; // prefer right (j > i)
                const S* di = dot + size_t(i) * len;
                S* si = logQ.data() + base + size_t(i) * len;
                // Two branch-free ranges (the diagonal is masked by the scan).
                const S left = rho * back + gamma, right = rho * fwd + gamma;
                for (int j = 0; j <= i; ++j)
                    si[j] = alpha * di[j] + left;
                for (int j = i + 1; j < len; ++j)
                    si[j] = alpha * di[j] + right;
            }
        }
    }
    // 2. log P = log sigmoid(s), log(1 - P) = log P - s: one pass over the batch
    forRowRanges(Index(total), 1, [&](Index e0, Index e1) {
        using Arr = Eigen::Array<S, Eigen::Dynamic, 1>;
        Eigen::Map<Arr> sq(logQ.data() + e0, e1 - e0), lp(c.logP.data() + e0, e1 - e0);
        lp = logSigmoidArray(sq);
        sq = lp - sq;
    });
    // 3. Each block's row scans give log A
#pragma omp parallel for if (splitExamples) schedule(static)
    for (int b = 0; b < B; ++b) {
        Scratch& w = scratch[omp_get_thread_num()];
        const int len = shape.lengths[b];
        const size_t LL = size_t(len) * len;
        w.prefix.resize(size_t(len) + 1);
        for (int h = 0; h < H; ++h) {
            const size_t base = c.blocks[b] + size_t(h) * LL;
            geometricLogScan(c.logP.data() + base, logQ.data() + base, len, len, c.att.data() + base,
                             w.prefix.data());
        }
    }
    // 4. A = exp(log A): one pass (exp(-inf) = 0 on the diagonal)
    expInPlace(c.att.data(), Index(total));
    // 5. Optional L1 normalisation; mixed = A v
#pragma omp parallel for if (splitExamples) schedule(static)
    for (int b = 0; b < B; ++b) {
        const int len = shape.lengths[b];
        const size_t LL = size_t(len) * len;
        const S* rows = c.proj.data() + shape.start(b) * P;
        c.mixed.middleRows(shape.start(b) + len, shape.span(b) - len).setZero();
        for (int h = 0; h < H; ++h) {
            const size_t base = c.blocks[b] + size_t(h) * LL;
            const Block<const S> v{rows + 2 * C + h * D, len, D, P};
            S* a = c.att.data() + base;
            if (normalizeL1) {
                for (int i = 0; i < len; ++i) {
                    S sum = 0;
                    for (int j = 0; j < len; ++j)
                        sum += a[size_t(i) * len + j];
                    c.rowSum[(size_t(b) * H + h) * T + i] = sum;
                    const S inv = S(1) / (sum + S(1e-6));
                    for (int j = 0; j < len; ++j)
                        a[size_t(i) * len + j] *= inv;
                }
            }
            productAB<S>(Block<const S>{a, len, len, len}, v, S(1),
                         Block<S>{c.mixed.data() + shape.start(b) * C + h * D, len, D, C}, false);
        }
    }
    projectHeads<S>(c.mixed, headWeights, store.value(p.wo), c.routed, out);
}

template <typename S>
void GeometricAttention<S>::backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape,
                                     const Cache& c, const Mat<S>& dOut, Mat<S>& dx, Mat<S>& dProj,
                                     bool accumulateDx, const Mat<S>* headWeights,
                                     Mat<S>* dHeadWeights) const {
    const int B = shape.batch, T = shape.positions, C = channels, H = heads, D = C / H;
    const Index N = shape.rows(), P = 3 * C + 2 * H;
    // out = mixed Wo^T (routed: mixed scaled per head)
    projectHeadsBackward<S>(dOut, c.mixed, c.routed, store.value(p.wo), store.grad(p.wo), headWeights, dMixed,
                            dHeadWeights);

    const auto sc = store.value(p.scalars);
    const S alpha = sc(0, 0), rho = sc(0, 1);
    // Every entry of dProj is assigned below (padded rows set to zero), so no clearing pass.
    dProj.resize(N, P);
    S dAlpha = 0, dRho = 0, dGamma = 0;
    scratch.resize(std::max<size_t>(scratch.size(), size_t(omp_get_max_threads())));

    const size_t total = c.blocks[B];
    gAll.resize(total);
    sigAll.resize(total);
    dsAll.resize(total);
    if (normalizeL1)
        rawAll.resize(total);
    const bool splitExamples = splitOverExamples(B);
    // 1. mixed = A v: dA (into gAll) and dv; with L1, dA through the normalisation and the raw A
#pragma omp parallel for if (splitExamples) schedule(static)
    for (int b = 0; b < B; ++b) {
        const int len = shape.lengths[b];
        const size_t LL = size_t(len) * len;
        const S* rows = c.proj.data() + shape.start(b) * P;
        S* dRows = dProj.data() + shape.start(b) * P;
        dProj.middleRows(shape.start(b) + len, shape.span(b) - len).setZero();
        for (int h = 0; h < H; ++h) {
            const size_t base = c.blocks[b] + size_t(h) * LL;
            const Block<const S> v{rows + 2 * C + h * D, len, D, P};
            const Block<const S> dm{dMixed.data() + shape.start(b) * C + h * D, len, D, C};
            const S* A = c.att.data() + base;
            S* dA = gAll.data() + base;
            productABt<S>(dm, v, S(1), Block<S>{dA, len, len, len});
            productAtB<S>(Block<const S>{A, len, len, len}, dm, S(1),
                          Block<S>{dRows + 2 * C + h * D, len, D, P}, false);
            if (normalizeL1) {
                // A = R / (sum_j R_ij + eps): dR_ij = (dA_ij - sum_k dA_ik A_ik) / (sum + eps)
                S* raw = rawAll.data() + base;
                for (int i = 0; i < len; ++i) {
                    const S denom = c.rowSum[(size_t(b) * H + h) * T + i] + S(1e-6);
                    S inner = 0;
                    for (int j = 0; j < len; ++j)
                        inner += dA[size_t(i) * len + j] * A[size_t(i) * len + j];
                    for (int j = 0; j < len; ++j) {
                        dA[size_t(i) * len + j] = (dA[size_t(i) * len + j] - inner) / denom;
                        raw[size_t(i) * len + j] = A[size_t(i) * len + j] * denom;
                    }
                }
            }
        }
    }
    // 2. g = dA * A = d loss / d log A, and sigmoid(s) = exp(log P): one pass over the batch
    const S* aForKernel = normalizeL1 ? rawAll.data() : c.att.data();
    forRowRanges(Index(total), 1, [&](Index e0, Index e1) {
        using Arr = Eigen::Array<S, Eigen::Dynamic, 1>;
        const Index n = e1 - e0;
        Eigen::Map<Arr>(gAll.data() + e0, n) *= Eigen::Map<const Arr>(aForKernel + e0, n);
        Eigen::Map<Arr>(sigAll.data() + e0, n) = Eigen::Map<const Arr>(c.logP.data() + e0, n).exp();
    });
    // 3. Each block's scores' gradient, then the scores' inputs
#pragma omp parallel for if (splitExamples) schedule(static) reduction(+ : dAlpha, dRho, dGamma)
    for (int b = 0; b < B; ++b) {
        Scratch& w = scratch[omp_get_thread_num()];
        const int len = shape.lengths[b];
        const size_t LL = size_t(len) * len;
        w.prefix.resize(size_t(len) + 1);
        const S* rows = c.proj.data() + shape.start(b) * P;
        S* dRows = dProj.data() + shape.start(b) * P;
        for (int h = 0; h < H; ++h) {
            const size_t base = c.blocks[b] + size_t(h) * LL;
            const Block<const S> q{rows + h * D, len, D, P}, k{rows + C + h * D, len, D, P};
            const Block<S> dq{dRows + h * D, len, D, P}, dk{dRows + C + h * D, len, D, P};
            const S* dot = c.dot.data() + base;
            S* dS = dsAll.data() + base;
            geometricScoreGrad(gAll.data() + base, sigAll.data() + base, len, len, dS, w.prefix.data());
            // s_ij = alpha q_i.k_j + rho (f_i if j > i, b_i if j < i) + gamma
            for (int i = 0; i < len; ++i) {
                const S back = rows[Index(i) * P + 3 * C + 2 * h];
                const S fwd = rows[Index(i) * P + 3 * C + 2 * h + 1];
                const S* gi = dS + size_t(i) * len; // zero on the diagonal (the kernel masks it)
                const S* di = dot + size_t(i) * len;
                // Sums in registers: the OpenMP reduction variables live in memory.
                S dBack = 0, dFwd = 0, dDot = 0;
                for (int j = 0; j < i; ++j) {
                    dBack += gi[j];
                    dDot += gi[j] * di[j];
                }
                for (int j = i + 1; j < len; ++j) {
                    dFwd += gi[j];
                    dDot += gi[j] * di[j];
                }
                dAlpha += dDot;
                dGamma += dBack + dFwd;
                dRho += dBack * back + dFwd * fwd;
                dRows[Index(i) * P + 3 * C + 2 * h] = rho * dBack;
                dRows[Index(i) * P + 3 * C + 2 * h + 1] = rho * dFwd;
            }
            const Block<const S> dsl{dS, len, len, len};
            productAB<S>(dsl, k, alpha, dq, false);
            productAtB<S>(dsl, q, alpha, dk, false);
            // k was multiplied by the dropout mask after projection (done here, while dk is in cache)
            if (c.keyMask.size() > 0)
                for (int i = 0; i < len; ++i) {
                    const S* m = c.keyMask.data() + (shape.start(b) + i) * C + h * D;
                    S* dki = dk.row(i);
                    for (int t = 0; t < D; ++t)
                        dki[t] *= m[t];
                }
        }
    }
    auto dsc = store.grad(p.scalars);
    dsc(0, 0) += dAlpha;
    dsc(0, 1) += dRho;
    dsc(0, 2) += dGamma;
    biasBackward(dProj.leftCols(C), store.grad(p.qBias));
    biasBackward(dProj.rightCols(2 * H), store.grad(p.posBias));
    linearBackward<S>(dProj, x, store.valueRows(p.wq, p.wqp), store.gradRows(p.wq, p.wqp), &dx, accumulateDx);
}

#define NDR_INSTANTIATE(S) template struct GeometricAttention<S>;
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr

// Softmax and directional geometric attention: forward, backward, and the naive geometric oracle.
#include "attention.h"

#include <cmath>
#include <limits>
#include <omp.h>

namespace ndr {

namespace {

template <typename S>
using StridedMap = Eigen::Map<const Mat<S>, 0, Eigen::OuterStride<>>;
template <typename S>
using StridedMutMap = Eigen::Map<Mat<S>, 0, Eigen::OuterStride<>>;

template <typename S>
StridedMap<S> block(const Mat<S>& m, Index row, Index col, Index rows, Index cols) {
    return StridedMap<S>(m.data() + row * m.cols() + col, rows, cols, Eigen::OuterStride<>(m.cols()));
}
template <typename S>
StridedMutMap<S> mutBlock(Mat<S>& m, Index row, Index col, Index rows, Index cols) {
    return StridedMutMap<S>(m.data() + row * m.cols() + col, rows, cols, Eigen::OuterStride<>(m.cols()));
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Geometric kernel

// Both kernels apply the transcendental functions to the whole (T, T) block at once: rows are shorter
// than a SIMD packet at CTL lengths, so per-row array expressions would run scalar.
template <typename S>
void geometricForward(const S* s, int T, int len, S* att) {
    using Arr = Eigen::Array<S, Eigen::Dynamic, 1>;
    const size_t TT = size_t(T) * T;
    const Eigen::Map<const Arr> scores(s, TT);
    const Arr logP = logSigmoidArray(scores); // log P_ij
    const Arr logQ = logP - scores;           // log(1 - P_ij) = log sigmoid(s) - s
    std::vector<S> prefix(T + 1);             // prefix[m] = sum_{k<m} log(1 - P_ik)
    Eigen::Map<Arr> out(att, TT);
    out.setConstant(-std::numeric_limits<S>::infinity());
    for (int i = 0; i < len; ++i) {
        const S* lq = logQ.data() + size_t(i) * T;
        prefix[0] = 0;
        // The column itself and padded keys are masked: transparent in the scan.
        for (int k = 0; k < T; ++k) prefix[k + 1] = prefix[k] + ((k < len && k != i) ? lq[k] : S(0));
        S* a = att + size_t(i) * T;
        for (int j = 0; j < len; ++j) {
            if (j == i) continue;
            // Keys closer than j: (2i-j, j) when j is right of i; (j, 2i-j] when j is left of i.
            const int lo = j > i ? std::max(0, 2 * i - j + 1) : j + 1;
            const int hi = j > i ? j - 1 : std::min(T - 1, 2 * i - j);
            a[j] = logP(size_t(i) * T + j) + prefix[hi + 1] - prefix[lo];
        }
    }
    out = out.exp(); // exp(-inf) = 0 on masked entries
}

template <typename S>
void geometricBackward(const S* s, const S* att, const S* dAtt, int T, int len, S* ds) {
    using Arr = Eigen::Array<S, Eigen::Dynamic, 1>;
    const size_t TT = size_t(T) * T;
    const Arr sigPos = logSigmoidArray(Eigen::Map<const Arr>(s, TT)).exp(); // sigmoid(s)
    // g = d loss / d log A_ij, where log A_ij = log P_ij + sum_{k in window} log(1 - P_ik)
    const Arr g = Eigen::Map<const Arr>(dAtt, TT) * Eigen::Map<const Arr>(att, TT);
    std::vector<S> diff(T + 1); // difference array of d loss / d log(1 - P_ik) over k
    std::fill(ds, ds + TT, S(0));
    for (int i = 0; i < len; ++i) {
        const S* gi = g.data() + size_t(i) * T;
        const S* sp = sigPos.data() + size_t(i) * T;
        S* dsi = ds + size_t(i) * T;
        std::fill(diff.begin(), diff.end(), S(0));
        for (int j = 0; j < len; ++j) {
            if (j == i) continue;
            const int lo = j > i ? std::max(0, 2 * i - j + 1) : j + 1;
            const int hi = j > i ? j - 1 : std::min(T - 1, 2 * i - j);
            if (lo <= hi) {
                diff[lo] += gi[j];
                diff[hi + 1] -= gi[j];
            }
        }
        // d log sigmoid(s) / ds = sigmoid(-s);  d log sigmoid(-s) / ds = -sigmoid(s)
        S run = 0;
        for (int k = 0; k < len; ++k) {
            run += diff[k];
            dsi[k] = k == i ? S(0) : gi[k] * (S(1) - sp[k]) - run * sp[k];
        }
    }
}

template <typename S>
void geometricNaive(const S* s, int T, int len, S* att) {
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
            S a = 0;
            if (i < len && j < len && j != i) {
                a = sigmoid(s[size_t(i) * T + j]);
                for (int k = 0; k < len; ++k)
                    if (k != i && geometricCloser(i, j, k)) a *= S(1) - sigmoid(s[size_t(i) * T + k]);
            }
            att[size_t(i) * T + j] = a;
        }
}

// ---------------------------------------------------------------------------------------------
// Geometric attention layer

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
                                    bool training, double keyDropout, Rng& rng, Cache& c, Mat<S>& out) const {
    const int B = shape.batch, T = shape.positions, C = channels, H = heads, D = C / H;
    const Index N = Index(B) * T;
    // proj (N, 3C + 2H) = x [Wq; Wkv; Wqp]^T + [c | 0 | 0 | bqp]
    linearForward<S>(x, store.valueRows(p.wq, p.wqp), c.proj);
    c.proj.leftCols(C).rowwise() += store.value(p.qBias).row(0);
    c.proj.rightCols(2 * H).rowwise() += store.value(p.posBias).row(0);
    dropoutMask(c.keyMask, N, C, keyDropout, training, rng);
    if (training && keyDropout > 0) c.proj.middleCols(C, C).array() *= c.keyMask.array();

    const auto sc = store.value(p.scalars);
    const S alpha = sc(0, 0), rho = sc(0, 1), gamma = sc(0, 2);
    const size_t TT = size_t(T) * T;
    c.dot.assign(size_t(B) * H * TT, S(0));
    c.att.assign(size_t(B) * H * TT, S(0));
    if (normalizeL1) c.rowSum.assign(size_t(B) * H * T, S(0));
    c.mixed.setZero(N, C);

#pragma omp parallel for if (B >= 64 && omp_get_max_threads() > 1) schedule(static)
    for (int b = 0; b < B; ++b) {
        AlignedVector<S> scores(TT);
        const int len = shape.lengths[b];
        for (int h = 0; h < H; ++h) {
            const size_t base = (size_t(b) * H + h) * TT;
            auto q = block(c.proj, Index(b) * T, h * D, len, D);
            auto k = block(c.proj, Index(b) * T, C + h * D, len, D);
            auto v = block(c.proj, Index(b) * T, 2 * C + h * D, len, D);
            Eigen::Map<Mat<S>> dot(c.dot.data() + base, T, T);
            dot.topLeftCorner(len, len).noalias() = q.lazyProduct(k.transpose());
            for (int i = 0; i < len; ++i) {
                const S back = c.proj(Index(b) * T + i, 3 * C + 2 * h);      // prefer left (j < i)
                const S fwd = c.proj(Index(b) * T + i, 3 * C + 2 * h + 1);   // prefer right (j > i)
                for (int j = 0; j < len; ++j)
                    scores[size_t(i) * T + j] = alpha * dot(i, j) + rho * (j > i ? fwd : back) + gamma;
            }
            S* a = c.att.data() + base;
            geometricForward(scores.data(), T, len, a);
            if (normalizeL1) {
                for (int i = 0; i < len; ++i) {
                    S sum = 0;
                    for (int j = 0; j < len; ++j) sum += a[size_t(i) * T + j];
                    c.rowSum[(size_t(b) * H + h) * T + i] = sum;
                    const S inv = S(1) / (sum + S(1e-6));
                    for (int j = 0; j < len; ++j) a[size_t(i) * T + j] *= inv;
                }
            }
            Eigen::Map<const Mat<S>> A(a, T, T);
            mutBlock(c.mixed, Index(b) * T, h * D, len, D).noalias() = A.topLeftCorner(len, len).lazyProduct(v);
        }
    }
    linearForward<S>(c.mixed, store.value(p.wo), out);
}

template <typename S>
void GeometricAttention<S>::backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape,
                                     const Cache& c, const Mat<S>& dOut, Mat<S>& dx, Mat<S>& dProj) const {
    const int B = shape.batch, T = shape.positions, C = channels, H = heads, D = C / H;
    const Index N = Index(B) * T;
    // out = mixed Wo^T
    linearBackward<S>(dOut, c.mixed, store.value(p.wo), store.grad(p.wo), &dMixed);

    const auto sc = store.value(p.scalars);
    const S alpha = sc(0, 0), rho = sc(0, 1), gamma = sc(0, 2);
    const size_t TT = size_t(T) * T;
    dProj.setZero(N, c.proj.cols());
    S dAlpha = 0, dRho = 0, dGamma = 0;

#pragma omp parallel for if (B >= 64 && omp_get_max_threads() > 1) schedule(static) reduction(+ : dAlpha, dRho, dGamma)
    for (int b = 0; b < B; ++b) {
        AlignedVector<S> scores(TT), dA(TT), dS(TT);
        const int len = shape.lengths[b];
        for (int h = 0; h < H; ++h) {
            const size_t base = (size_t(b) * H + h) * TT;
            auto q = block(c.proj, Index(b) * T, h * D, len, D);
            auto k = block(c.proj, Index(b) * T, C + h * D, len, D);
            auto v = block(c.proj, Index(b) * T, 2 * C + h * D, len, D);
            auto dm = block(dMixed, Index(b) * T, h * D, len, D);
            Eigen::Map<const Mat<S>> A(c.att.data() + base, T, T);
            Eigen::Map<const Mat<S>> dot(c.dot.data() + base, T, T);
            Eigen::Map<Mat<S>> dAm(dA.data(), T, T);
            dAm.setZero();
            // mixed = A v
            dAm.topLeftCorner(len, len).noalias() = dm.lazyProduct(v.transpose());
            mutBlock(dProj, Index(b) * T, 2 * C + h * D, len, D).noalias() +=
                A.topLeftCorner(len, len).transpose().lazyProduct(dm);
            AlignedVector<S> rawA;
            const S* aForKernel = c.att.data() + base;
            if (normalizeL1) {
                // A = R / (sum_j R_ij + eps): dR_ij = (dA_ij - sum_k dA_ik A_ik) / (sum + eps)
                rawA.assign(TT, S(0));
                for (int i = 0; i < len; ++i) {
                    const S denom = c.rowSum[(size_t(b) * H + h) * T + i] + S(1e-6);
                    S inner = 0;
                    for (int j = 0; j < len; ++j) inner += dAm(i, j) * A(i, j);
                    for (int j = 0; j < len; ++j) {
                        dAm(i, j) = (dAm(i, j) - inner) / denom;
                        rawA[size_t(i) * T + j] = A(i, j) * denom;
                    }
                }
                aForKernel = rawA.data();
            }
            for (int i = 0; i < len; ++i) {
                const S back = c.proj(Index(b) * T + i, 3 * C + 2 * h);
                const S fwd = c.proj(Index(b) * T + i, 3 * C + 2 * h + 1);
                for (int j = 0; j < len; ++j)
                    scores[size_t(i) * T + j] = alpha * dot(i, j) + rho * (j > i ? fwd : back) + gamma;
            }
            geometricBackward(scores.data(), aForKernel, dA.data(), T, len, dS.data());
            Eigen::Map<Mat<S>> dSm(dS.data(), T, T);
            // s_ij = alpha q_i.k_j + rho (f_i if j > i, b_i if j < i) + gamma
            for (int i = 0; i < len; ++i) {
                const S back = c.proj(Index(b) * T + i, 3 * C + 2 * h);
                const S fwd = c.proj(Index(b) * T + i, 3 * C + 2 * h + 1);
                S dBack = 0, dFwd = 0;
                for (int j = 0; j < len; ++j) {
                    if (j == i) continue;
                    const S g = dSm(i, j);
                    dAlpha += g * dot(i, j);
                    dGamma += g;
                    if (j > i) {
                        dRho += g * fwd;
                        dFwd += g;
                    } else {
                        dRho += g * back;
                        dBack += g;
                    }
                }
                dProj(Index(b) * T + i, 3 * C + 2 * h) += rho * dBack;
                dProj(Index(b) * T + i, 3 * C + 2 * h + 1) += rho * dFwd;
            }
            auto dsl = dSm.topLeftCorner(len, len);
            mutBlock(dProj, Index(b) * T, h * D, len, D).noalias() += (alpha * dsl).lazyProduct(k);
            mutBlock(dProj, Index(b) * T, C + h * D, len, D).noalias() += (alpha * dsl.transpose()).lazyProduct(q);
        }
    }
    auto dsc = store.grad(p.scalars);
    dsc(0, 0) += dAlpha;
    dsc(0, 1) += dRho;
    dsc(0, 2) += dGamma;
    // k was multiplied by the dropout mask after projection
    dProj.middleCols(C, C).array() *= c.keyMask.array();
    biasBackward(dProj.leftCols(C), store.grad(p.qBias));
    biasBackward(dProj.rightCols(2 * H), store.grad(p.posBias));
    linearBackward<S>(dProj, x, store.valueRows(p.wq, p.wqp), store.gradRows(p.wq, p.wqp), &dx);
}

// ---------------------------------------------------------------------------------------------
// Softmax attention layer

template <typename S>
void SoftmaxAttention<S>::declare(ParamStore<S>& store, const std::string& prefix, int c, int h) {
    channels = c;
    heads = h;
    p.wq = store.add(prefix + "att.wq", c, c);
    p.wkv = store.add(prefix + "att.wkv", 2 * c, c);
    p.wo = store.add(prefix + "att.wo", c, c);
}

template <typename S>
void SoftmaxAttention<S>::forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, bool training,
                                  double attDropout, Rng& rng, Cache& c, Mat<S>& out) const {
    const int B = shape.batch, T = shape.positions, C = channels, H = heads, D = C / H;
    const Index N = Index(B) * T;
    const S scale = S(1.0 / std::sqrt(double(D)));
    linearForward<S>(x, store.valueRows(p.wq, p.wkv), c.proj);
    const size_t TT = size_t(T) * T;
    c.att.assign(size_t(B) * H * TT, S(0));
    const bool drop = training && attDropout > 0;
    if (drop) {
        // Drawn serially, before the parallel loop, so the stream does not depend on thread count.
        Mat<S> m;
        dropoutMask(m, Index(B) * H * T, T, attDropout, true, rng);
        c.drop.assign(m.data(), m.data() + m.size());
    } else {
        c.drop.clear();
    }
    c.mixed.setZero(N, C);

#pragma omp parallel for if (B >= 64 && omp_get_max_threads() > 1) schedule(static)
    for (int b = 0; b < B; ++b) {
        const int len = shape.lengths[b];
        AlignedVector<S> tmp(TT);
        for (int h = 0; h < H; ++h) {
            const size_t base = (size_t(b) * H + h) * TT;
            auto q = block(c.proj, Index(b) * T, h * D, len, D);
            auto k = block(c.proj, Index(b) * T, C + h * D, len, D);
            auto v = block(c.proj, Index(b) * T, 2 * C + h * D, len, D);
            Eigen::Map<Mat<S>> A(c.att.data() + base, T, T);
            A.topLeftCorner(len, len).noalias() = scale * q.lazyProduct(k.transpose());
            for (int i = 0; i < len; ++i) {
                auto row = A.row(i).head(len);
                const S mx = row.maxCoeff();
                row.array() = (row.array() - mx).exp();
                row /= row.sum();
            }
            if (drop) {
                Eigen::Map<Mat<S>> ad(tmp.data(), T, T);
                Eigen::Map<const Mat<S>> m(c.drop.data() + base, T, T);
                ad = A.cwiseProduct(m);
                mutBlock(c.mixed, Index(b) * T, h * D, len, D).noalias() = ad.topLeftCorner(len, len).lazyProduct(v);
            } else {
                mutBlock(c.mixed, Index(b) * T, h * D, len, D).noalias() = A.topLeftCorner(len, len).lazyProduct(v);
            }
        }
    }
    linearForward<S>(c.mixed, store.value(p.wo), out);
}

template <typename S>
void SoftmaxAttention<S>::backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape,
                                   const Cache& c, const Mat<S>& dOut, Mat<S>& dx, Mat<S>& dProj) const {
    const int B = shape.batch, T = shape.positions, C = channels, H = heads, D = C / H;
    const Index N = Index(B) * T;
    const S scale = S(1.0 / std::sqrt(double(D)));
    linearBackward<S>(dOut, c.mixed, store.value(p.wo), store.grad(p.wo), &dMixed);
    const size_t TT = size_t(T) * T;
    dProj.setZero(N, c.proj.cols());
    const bool drop = !c.drop.empty();

#pragma omp parallel for if (B >= 64 && omp_get_max_threads() > 1) schedule(static)
    for (int b = 0; b < B; ++b) {
        const int len = shape.lengths[b];
        AlignedVector<S> dAbuf(TT), adBuf(TT);
        for (int h = 0; h < H; ++h) {
            const size_t base = (size_t(b) * H + h) * TT;
            auto q = block(c.proj, Index(b) * T, h * D, len, D);
            auto k = block(c.proj, Index(b) * T, C + h * D, len, D);
            auto v = block(c.proj, Index(b) * T, 2 * C + h * D, len, D);
            auto dm = block(dMixed, Index(b) * T, h * D, len, D);
            Eigen::Map<const Mat<S>> A(c.att.data() + base, T, T);
            Eigen::Map<Mat<S>> dA(dAbuf.data(), T, T);
            Eigen::Map<Mat<S>> Ad(adBuf.data(), T, T);
            if (drop) Ad = A.cwiseProduct(Eigen::Map<const Mat<S>>(c.drop.data() + base, T, T));
            else Ad = A;
            // mixed = (A * mask) v
            dA.topLeftCorner(len, len).noalias() = dm.lazyProduct(v.transpose());
            mutBlock(dProj, Index(b) * T, 2 * C + h * D, len, D).noalias() +=
                Ad.topLeftCorner(len, len).transpose().lazyProduct(dm);
            if (drop) dA.array() *= Eigen::Map<const Mat<S>>(c.drop.data() + base, T, T).array();
            // softmax: ds_ij = A_ij (dA_ij - sum_k dA_ik A_ik)
            for (int i = 0; i < len; ++i) {
                const S inner = dA.row(i).head(len).dot(A.row(i).head(len));
                dA.row(i).head(len) = (A.row(i).head(len).array() * (dA.row(i).head(len).array() - inner)).matrix();
            }
            auto ds = dA.topLeftCorner(len, len);
            mutBlock(dProj, Index(b) * T, h * D, len, D).noalias() += (scale * ds).lazyProduct(k);
            mutBlock(dProj, Index(b) * T, C + h * D, len, D).noalias() += (scale * ds.transpose()).lazyProduct(q);
        }
    }
    linearBackward<S>(dProj, x, store.valueRows(p.wq, p.wkv), store.gradRows(p.wq, p.wkv), &dx);
}

#define NDR_INSTANTIATE(S)                                                                          \
    template void geometricForward<S>(const S*, int, int, S*);                                      \
    template void geometricBackward<S>(const S*, const S*, const S*, int, int, S*);                 \
    template void geometricNaive<S>(const S*, int, int, S*);                                        \
    template struct GeometricAttention<S>;                                                          \
    template struct SoftmaxAttention<S>;
NDR_INSTANTIATE(float)
NDR_INSTANTIATE(double)

} // namespace ndr

// Head routing: gate network, top-k, softmax over the kept heads, entropy (see head_router.h).
#include "core/nn/head_router.h"
#include "core/nn/scalars.h"

#include "core/nn/attention.h"

#include <unsupported/Eigen/SpecialFunctions>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace ndr {

namespace {

constexpr double kEntropyEps = 1e-8;

// GELU in its exact form x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2, over a whole matrix: Eigen's
// erf runs on SIMD packets in float (a rational approximation within a few ulp) and is std::erf in
// double, so the double-precision gradient checks test the same formula. erfTerm keeps 1 + erf for the
// backward.
template <typename S> void geluInto(const Mat<S>& pre, Mat<S>& erfTerm, Mat<S>& out) {
    const auto x = pre.array();
    erfTerm = (S(1) + (x * S(M_SQRT1_2)).erf()).matrix();
    out = (S(0.5) * x * erfTerm.array()).matrix();
}
// d *= Phi(pre) + pre phi(pre), the derivative of GELU at pre, with phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
template <typename S> void geluBackwardInPlace(const Mat<S>& pre, const Mat<S>& erfTerm, Mat<S>& d) {
    const auto x = pre.array();
    const S invSqrt2Pi = S(0.5 * M_2_SQRTPI * M_SQRT1_2);
    d.array() *= S(0.5) * erfTerm.array() + x * (S(-0.5) * x.square()).exp() * invSqrt2Pi;
}

} // namespace

template <typename S>
void HeadRouter<S>::declare(ParamStore<S>& store, const std::string& prefix, int c, int h, int k,
                            DroppedHeads mode) {
    channels = c;
    heads = h;
    topK = k;
    dropped = mode;
    const int hidden = std::max(1, c / 2);
    p.w1 = store.add(prefix + "route.w1", hidden, c);
    p.b1 = store.add(prefix + "route.b1", 1, hidden);
    p.w2 = store.add(prefix + "route.w2", h, hidden);
    p.b2 = store.add(prefix + "route.b2", 1, h);
}

template <typename S>
template <typename InitRng>
void HeadRouter<S>::init(ParamStore<S>& store, InitRng& rng) const {
    xavierUniform<S>(store.value(p.w1), 1.0, rng);
    store.value(p.b1).setZero();
    xavierUniform<S>(store.value(p.w2), 1.0, rng);
    store.value(p.b2).setZero();
}

template <typename S> void HeadRouter<S>::forward(ParamStore<S>& store, const Mat<S>& x, Cache& c) const {
    const Index N = x.rows();
    const int H = heads, k = kept();
    c.pre.noalias() = x * store.value(p.w1).transpose();
    c.pre.rowwise() += store.value(p.b1).row(0);
    geluInto(c.pre, c.erfTerm, c.hidden);
    c.logits.noalias() = c.hidden * store.value(p.w2).transpose();
    c.logits.rowwise() += store.value(p.b2).row(0);
    c.kept.setZero(N, H);
    c.weights.setZero(N, H);
    std::vector<int> order(size_t(H), 0);
    for (Index n = 0; n < N; ++n) {
        // The k largest logits; ties go to the lower head index.
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return c.logits(n, a) > c.logits(n, b); });
        for (int i = 0; i < k; ++i)
            c.kept(n, order[size_t(i)]) = S(1);
        // Softmax over the kept heads (Masked) or over all heads with dropped logits at 0 (SeedExact).
        S top = -std::numeric_limits<S>::infinity();
        for (int h = 0; h < H; ++h)
            if (c.kept(n, h) > 0 || dropped == DroppedHeads::SeedExact)
                top = std::max(top, c.kept(n, h) > 0 ? c.logits(n, h) : S(0));
        S sum = 0;
        for (int h = 0; h < H; ++h) {
            if (c.kept(n, h) == 0 && dropped == DroppedHeads::Masked)
                continue;
            const S logit = c.kept(n, h) > 0 ? c.logits(n, h) : S(0);
            c.weights(n, h) = std::exp(logit - top);
            sum += c.weights(n, h);
        }
        c.weights.row(n) /= sum;
    }
}

template <typename S> S HeadRouter<S>::entropy(const Mat<S>& weights) {
    if (weights.rows() == 0)
        return S(0);
    S total = 0;
    for (Index i = 0; i < weights.size(); ++i) {
        const S w = weights.data()[i];
        total -= w * std::log(w + S(kEntropyEps));
    }
    return total / S(weights.rows());
}

template <typename S> void HeadRouter<S>::addEntropyGrad(const Mat<S>& weights, S coef, Mat<S>& dWeights) {
    if (weights.rows() == 0)
        return;
    const S scale = coef / S(weights.rows());
    for (Index i = 0; i < weights.size(); ++i) {
        const S w = weights.data()[i];
        dWeights.data()[i] -= scale * (std::log(w + S(kEntropyEps)) + w / (w + S(kEntropyEps)));
    }
}

template <typename S> S HeadRouter<S>::entropy(const Mat<S>& weights, const BatchShape& shape) {
    S total = 0;
    Index rows = 0;
    for (int b = 0; b < shape.batch; ++b) {
        const Index first = shape.start(b), len = shape.lengths[b];
        rows += len;
        for (Index n = first; n < first + len; ++n)
            for (Index h = 0; h < weights.cols(); ++h) {
                const S w = weights(n, h);
                total -= w * std::log(w + S(kEntropyEps));
            }
    }
    return rows > 0 ? total / S(rows) : S(0);
}

template <typename S>
void HeadRouter<S>::addEntropyGrad(const Mat<S>& weights, const BatchShape& shape, S coef, Mat<S>& dWeights) {
    Index rows = 0;
    for (int b = 0; b < shape.batch; ++b)
        rows += shape.lengths[b];
    if (rows == 0)
        return;
    const S scale = coef / S(rows);
    for (int b = 0; b < shape.batch; ++b) {
        const Index first = shape.start(b), len = shape.lengths[b];
        for (Index n = first; n < first + len; ++n)
            for (Index h = 0; h < weights.cols(); ++h) {
                const S w = weights(n, h);
                dWeights(n, h) -= scale * (std::log(w + S(kEntropyEps)) + w / (w + S(kEntropyEps)));
            }
    }
}

template <typename S>
void HeadRouter<S>::backward(ParamStore<S>& store, const Mat<S>& x, const Cache& c, const Mat<S>& dWeights,
                             Mat<S>& dx) const {
    const Index N = x.rows();
    const int H = heads;
    // Softmax backward over the heads that took part; a dropped head's logit gets no gradient (Masked:
    // not in the softmax; SeedExact: its logit was multiplied by 0).
    Mat<S> dLogits(N, H);
    for (Index n = 0; n < N; ++n) {
        const S dot = c.weights.row(n).dot(dWeights.row(n));
        for (int h = 0; h < H; ++h)
            dLogits(n, h) = c.kept(n, h) > 0 ? c.weights(n, h) * (dWeights(n, h) - dot) : S(0);
    }
    store.grad(p.w2).noalias() += dLogits.transpose() * c.hidden;
    store.grad(p.b2).row(0) += dLogits.colwise().sum();
    Mat<S> dPre = dLogits * store.value(p.w2);
    geluBackwardInPlace(c.pre, c.erfTerm, dPre);
    store.grad(p.w1).noalias() += dPre.transpose() * x;
    store.grad(p.b1).row(0) += dPre.colwise().sum();
    dx.noalias() += dPre * store.value(p.w1);
}

template <typename S> void scaleHeads(const Mat<S>& mixed, const Mat<S>& weights, Mat<S>& routed) {
    const Index N = mixed.rows(), C = mixed.cols(), H = weights.cols(), D = C / H;
    routed.resize(N, C);
    for (Index n = 0; n < N; ++n)
        for (Index h = 0; h < H; ++h) {
            const S w = weights(n, h);
            const S* m = mixed.data() + n * C + h * D;
            S* r = routed.data() + n * C + h * D;
            for (Index d = 0; d < D; ++d)
                r[d] = w * m[d];
        }
}

template <typename S>
void scaleHeadsBackward(const Mat<S>& mixed, const Mat<S>& weights, Mat<S>& dMixed, Mat<S>& dWeights) {
    const Index N = mixed.rows(), C = mixed.cols(), H = weights.cols(), D = C / H;
    dWeights.resize(N, H);
    for (Index n = 0; n < N; ++n)
        for (Index h = 0; h < H; ++h) {
            const S w = weights(n, h);
            const S* m = mixed.data() + n * C + h * D;
            S* dm = dMixed.data() + n * C + h * D;
            S dw = 0;
            for (Index d = 0; d < D; ++d) {
                dw += dm[d] * m[d];
                dm[d] *= w;
            }
            dWeights(n, h) = dw;
        }
}

#define NDR_INSTANTIATE(S)                                                                                   \
    template struct HeadRouter<S>;                                                                           \
    template void scaleHeads<S>(const Mat<S>&, const Mat<S>&, Mat<S>&);                                      \
    template void scaleHeadsBackward<S>(const Mat<S>&, const Mat<S>&, Mat<S>&, Mat<S>&);                     \
    template void HeadRouter<S>::init<std::mt19937_64>(ParamStore<S>&, std::mt19937_64&) const;
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr

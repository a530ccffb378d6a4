// Small building blocks shared by the layers: linear maps, layer norm, dropout masks and the scalar
// activations. Each forward stores in its cache exactly what its backward needs; backward accumulates.
#pragma once

#include "tensor.h"

#include <cmath>
#include <cstdint>
#include <random>

namespace ndr {

using Rng = std::mt19937; // dropout masks: 32-bit draws compared with a threshold, deterministic

template <typename S>
inline S sigmoid(S x) { return S(1) / (S(1) + std::exp(-x)); }
// log(sigmoid(x)), stable for large |x|.
template <typename S>
inline S logSigmoid(S x) { return x >= S(0) ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x)); }

// Y (N, out) = X (N, in) W^T (W: (out, in)) [+ bias (1, out)]
template <typename S, typename XT, typename WT>
inline void linearForward(const XT& x, const WT& w, Mat<S>& y) {
    y.noalias() = x * w.transpose();
}
template <typename S, typename BT>
inline void addBias(Mat<S>& y, const BT& bias) {
    y.rowwise() += bias.row(0);
}
// Backward of Y = X W^T: dW += dY^T X, and dX = dY W (assigned, or added when accumulate).
template <typename S, typename DYT, typename XT, typename WT, typename DWT>
inline void linearBackward(const DYT& dy, const XT& x, const WT& w, DWT&& dw, Mat<S>* dx, bool accumulate = false) {
    dw.noalias() += dy.transpose() * x;
    if (dx) {
        if (accumulate) dx->noalias() += dy * w;
        else dx->noalias() = dy * w;
    }
}
template <typename DYT, typename DBT>
inline void biasBackward(const DYT& dy, DBT&& db) {
    db.row(0) += dy.colwise().sum();
}

// Fills `mask` with 0 (probability p) or 1/(1-p); all ones when p == 0 or not training.
template <typename S>
void dropoutMask(Mat<S>& mask, Index rows, Index cols, double p, bool training, Rng& rng) {
    mask.resize(rows, cols);
    if (!training || p <= 0) {
        mask.setOnes();
        return;
    }
    const uint32_t threshold = uint32_t(std::min(p, 1.0) * 4294967296.0 - 0.5);
    const S keep = S(1.0 / (1.0 - p));
    S* m = mask.data();
    for (Index i = 0; i < rows * cols; ++i) m[i] = rng() > threshold ? keep : S(0);
}

// Row-wise layer norm with learned gain and bias (eps 1e-5, biased variance, as torch.nn.LayerNorm).
template <typename S>
struct LayerNorm {
    struct Cache {
        Mat<S> xhat; // (N, C)
        Vec<S> rstd; // (N)
    };
    static constexpr double kEps = 1e-5;

    // y = xhat * gain + bias
    template <typename GT, typename BT>
    static void forward(const Mat<S>& x, const GT& gain, const BT& bias, Mat<S>& y, Cache& c) {
        const Index n = x.rows();
        c.xhat.resize(x.rows(), x.cols());
        c.rstd.resize(n);
        for (Index i = 0; i < n; ++i) {
            const S mean = x.row(i).mean();
            const S var = (x.row(i).array() - mean).square().mean();
            const S rstd = S(1) / std::sqrt(var + S(kEps));
            c.rstd(i) = rstd;
            c.xhat.row(i) = (x.row(i).array() - mean) * rstd;
        }
        y.resize(x.rows(), x.cols());
        y.array() = (c.xhat.array().rowwise() * gain.row(0).array()).rowwise() + bias.row(0).array();
    }

    // dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = dy * gain
    template <typename GT, typename DGT, typename DBT>
    static void backward(const Mat<S>& dy, const GT& gain, DGT&& dgain, DBT&& dbias, const Cache& c, Mat<S>& dx) {
        dgain.row(0) += (dy.array() * c.xhat.array()).matrix().colwise().sum();
        dbias.row(0) += dy.colwise().sum();
        dx.resize(dy.rows(), dy.cols());
        const S invC = S(1) / S(dy.cols());
        for (Index i = 0; i < dy.rows(); ++i) {
            auto dxhat = (dy.row(i).array() * gain.row(0).array()).eval();
            const S m1 = dxhat.sum() * invC;
            const S m2 = (dxhat * c.xhat.row(i).array()).sum() * invC;
            dx.row(i) = c.rstd(i) * (dxhat - m1 - c.xhat.row(i).array() * m2);
        }
    }
};

} // namespace ndr

// Small building blocks shared by the layers: linear maps, layer norm, dropout masks and the scalar
// activations. Each forward stores in its cache exactly what its backward needs; backward accumulates.
#pragma once

#include "tensor.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace ndr {

// xoshiro256** (Blackman & Vigna), seeded through SplitMix64: the generator of dropout masks. It
// replaced std::mt19937_64, which took ~9% of a stub training step in a profile. Satisfies
// UniformRandomBitGenerator; its state streams as text like the standard engines.
class Xoshiro256 {
public:
    using result_type = uint64_t;
    explicit Xoshiro256(uint64_t seed = 1) { this->seed(seed); }
    void seed(uint64_t seed) {
        for (auto& word : s_) {
            seed += 0x9E3779B97F4A7C15ULL;
            uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            word = z ^ (z >> 31);
        }
    }
    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return ~uint64_t(0); }
    result_type operator()() {
        const uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    template <typename Os>
    friend Os& operator<<(Os& os, const Xoshiro256& r) {
        return os << r.s_[0] << ' ' << r.s_[1] << ' ' << r.s_[2] << ' ' << r.s_[3], os;
    }
    template <typename Is>
    friend Is& operator>>(Is& is, Xoshiro256& r) {
        return is >> r.s_[0] >> r.s_[1] >> r.s_[2] >> r.s_[3], is;
    }

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t s_[4];
};

// Dropout masks: each 64-bit draw gives four 16-bit lanes compared with a threshold (p is resolved to
// 1/65536). Deterministic for a given seed.
using Rng = Xoshiro256;

// Bernoulli(keep = 1 - p) draws, four per generator call.
class KeepDraws {
public:
    KeepDraws(double p, Rng& rng) : threshold_(uint32_t(std::min(std::max(p, 0.0), 1.0) * 65536.0)), rng_(rng) {}
    bool next() {
        if (left_ == 0) {
            bits_ = rng_();
            left_ = 4;
        }
        const uint32_t lane = uint32_t(bits_ & 0xFFFF);
        bits_ >>= 16;
        --left_;
        return lane >= threshold_;
    }

private:
    uint32_t threshold_;
    Rng& rng_;
    uint64_t bits_ = 0;
    int left_ = 0;
};

template <typename S>
inline S sigmoid(S x) { return S(1) / (S(1) + std::exp(-x)); }
// log(sigmoid(x)), stable for large |x|.
template <typename S>
inline S logSigmoid(S x) { return x >= S(0) ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x)); }
// Vectorised log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)).
template <typename ArrayT>
inline auto logSigmoidArray(const ArrayT& x) {
    using S = typename ArrayT::Scalar;
    // log(1 + e) rather than log1p(e): Eigen vectorises log but not log1p, and for e < 2^-24 the
    // difference is below float resolution of the result.
    return x.min(S(0)) - (S(1) + (-x.abs()).exp()).log();
}

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
    // Same draws as KeepDraws, laid out so the comparison loop vectorises: each 64-bit draw is four
    // 16-bit lanes, lowest first.
    const Index n = rows * cols;
    thread_local std::vector<uint16_t> lanes;
    lanes.resize(size_t((n + 3) / 4) * 4);
    for (size_t w = 0; w < lanes.size() / 4; ++w) {
        uint64_t bits = rng();
        for (int l = 0; l < 4; ++l, bits >>= 16) lanes[4 * w + l] = uint16_t(bits & 0xFFFF);
    }
    const uint16_t threshold = uint16_t(std::min(p, 65535.0 / 65536.0) * 65536.0);
    const S keep = S(1.0 / (1.0 - p));
    S* m = mask.data();
    const uint16_t* r = lanes.data();
    for (Index i = 0; i < n; ++i) m[i] = r[i] >= threshold ? keep : S(0);
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

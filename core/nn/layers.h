// Small building blocks shared by the layers: linear maps, layer norm, dropout masks and the scalar
// activations. Each forward stores in its cache exactly what its backward needs; backward accumulates.
#pragma once

#include "core/nn/tensor.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <omp.h>
#include <random>
#include <type_traits>
#include <vector>

namespace ndr {

class DropoutStreams;

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
    template <typename Os> friend Os& operator<<(Os& os, const Xoshiro256& r) {
        return os << r.s_[0] << ' ' << r.s_[1] << ' ' << r.s_[2] << ' ' << r.s_[3], os;
    }
    template <typename Is> friend Is& operator>>(Is& is, Xoshiro256& r) {
        return is >> r.s_[0] >> r.s_[1] >> r.s_[2] >> r.s_[3], is;
    }

private:
    friend class DropoutStreams;
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t s_[4];
};

// The model's generator: dropout masks draw from it through DropoutStreams (each 64-bit draw four
// 16-bit lanes compared with a threshold, p resolved to 1/65536). Deterministic for a given seed.
using Rng = Xoshiro256;

// Whether a pass over `elements` values is split over the OpenMP threads: only with several threads
// (a model's TrainConfig::threads) and enough work to pay for waking them. With one thread every pass
// runs in order, as the one-thread results (and their golden tests) need.
inline bool splitOverThreads(Index elements) {
    return elements >= (Index(1) << 15) && omp_get_max_threads() > 1;
}

// Whether the attention layers' loops over a batch's examples (their per-example maps) are split over
// the OpenMP threads: only with several threads and a batch of at least 64 examples.
inline bool splitOverExamples(int batch) {
    return batch >= 64 && omp_get_max_threads() > 1;
}

// Calls fn(j0, j1) for ranges of columns [0, cols) that together cover them: one range on one thread,
// or, split, one range per thread. The ranges are whole 16-column packets, so no two threads write the
// same cache line of a row.
template <typename Fn> void forColumnRanges(Index rows, Index cols, Fn&& fn) {
    if (!splitOverThreads(rows * cols) || cols < 32) {
        fn(Index(0), cols);
        return;
    }
#pragma omp parallel
    {
        const Index n = omp_get_num_threads(), t = omp_get_thread_num();
        const Index packets = (cols + 15) / 16;
        fn(std::min(cols, packets * t / n * 16), std::min(cols, packets * (t + 1) / n * 16));
    }
}

// Calls fn(r0, r1) for ranges of rows [0, rows) that together cover them, as forColumnRanges: for
// passes whose rows are independent of each other.
template <typename Fn> void forRowRanges(Index rows, Index cols, Fn&& fn) {
    if (!splitOverThreads(rows * cols)) {
        fn(Index(0), rows);
        return;
    }
#pragma omp parallel
    {
        const Index n = omp_get_num_threads(), t = omp_get_thread_num();
        fn(rows * t / n, rows * (t + 1) / n);
    }
}

// out[j] += sum over rows of in[r][j] for j in [0, cols), the rows in order for every column, so the
// sums are the same split over threads or not.
template <typename S> void addColumnSums(const S* in, Index rows, Index cols, Index stride, S* out) {
    forColumnRanges(rows, cols, [&](Index j0, Index j1) {
        for (Index r = 0; r < rows; ++r) {
            const S* row = in + r * stride;
#pragma omp simd
            for (Index j = j0; j < j1; ++j)
                out[j] += row[j];
        }
    });
}

// Every entry of `w` from N(0, 1): the models' token embeddings.
template <typename S, typename WT, typename InitRng> void standardNormal(WT&& w, InitRng& rng) {
    std::normal_distribution<double> normal(0.0, 1.0);
    for (Index i = 0; i < w.size(); ++i)
        w.data()[i] = S(normal(rng));
}

// Bernoulli(keep = 1 - p) draws, four per generator call.
class KeepDraws {
public:
    KeepDraws(double p, Rng& rng)
        : threshold_(uint32_t(std::min(std::max(p, 0.0), 1.0) * 65536.0)), rng_(rng) {}
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

template <typename S> inline S sigmoid(S x) {
    return S(1) / (S(1) + std::exp(-x));
}
// log(sigmoid(x)), stable for large |x|.
template <typename S> inline S logSigmoid(S x) {
    return x >= S(0) ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x));
}
// Vectorised log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)).
template <typename ArrayT> inline auto logSigmoidArray(const ArrayT& x) {
    using S = typename ArrayT::Scalar;
    // log(1 + e) rather than log1p(e): Eigen vectorises log but not log1p, and for e < 2^-24 the
    // difference is below float resolution of the result.
    return x.min(S(0)) - (S(1) + (-x.abs()).exp()).log();
}

// Sinusoidal positional encoding value (Vaswani et al.), position t (negative for the relative offsets
// of docs/design.md §2), channel c of C: sin(t f) on even channels, cos(t f) on odd, f = 10000^(-2m/C).
inline double sinusoid(int t, int c, int channels) {
    const double freq = std::exp(-std::log(10000.0) * double(c - c % 2) / double(channels));
    return c % 2 == 0 ? std::sin(t * freq) : std::cos(t * freq);
}

// Y (N, out) = X (N, in) W^T (W: (out, in)) [+ bias (1, out)]
template <typename S, typename XT, typename WT>
inline void linearForward(const XT& x, const WT& w, Mat<S>& y) {
    y.noalias() = x * w.transpose();
}
// Y (N, out) = X W^T + bias (bias: out values). The rows start as the bias and the product is added:
// Eigen clears the destination of `y = X W^T` before accumulating into it, so this saves both that
// pass and a separate bias pass.
template <typename S, typename XT, typename WT>
inline void linearForwardBias(const XT& x, const WT& w, const S* bias, Mat<S>& y) {
    const Index n = x.rows(), out = w.rows();
    y.resize(n, out);
    // Row assignments, which Eigen vectorises: std::copy would be one memmove call per row, and
    // replicate() computes an index modulo per coefficient.
    const Eigen::Map<const RowVec<S>> b(bias, out);
    for (Index i = 0; i < n; ++i)
        y.row(i) = b;
    y.noalias() += x * w.transpose();
}
template <typename S, typename BT> inline void addBias(Mat<S>& y, const BT& bias) {
    y.rowwise() += bias.row(0);
}
// Backward of Y = X W^T: dW += dY^T X, and dX = dY W (assigned, or added when accumulate).
// dx may be a block of a wider matrix (e.g. the columns of dHidden that one map feeds).
template <typename S, typename DYT, typename XT, typename WT, typename DWT, typename DXT = Mat<S>>
inline void linearBackward(const DYT& dy, const XT& x, const WT& w, DWT&& dw, DXT* dx,
                           bool accumulate = false) {
    dw.noalias() += dy.transpose() * x;
    if (dx) {
        if (accumulate)
            dx->noalias() += dy * w;
        else
            dx->noalias() = dy * w;
    }
}
// db += column sums of dy, row by row: dy is row-major, so this runs along memory and vectorises
// over the columns (a colwise() sum walks down strided columns). Split, by ranges of columns.
template <typename DYT, typename DBT> inline void biasBackward(const DYT& dy, DBT&& db) {
    addColumnSums(dy.data(), dy.rows(), dy.cols(), dy.outerStride(), db.data());
}

// Eight xoshiro256** generators stepped side by side: the draws of one dropout pass. Stream k is
// Xoshiro256(the k-th of eight draws of the model's generator), so a pass advances that generator by
// eight draws whatever its length, and draw w of the pass is stream (w mod 8)'s draw (w div 8). The
// eight states are stepped together in SIMD vectors (shifts, xors and adds: the multiplications by 5
// and 9 are shifts and adds), and the same integer operations give the same draws on every engine.
class DropoutStreams {
public:
    static constexpr int kStreams = 8;
    explicit DropoutStreams(Rng& rng) {
        for (int k = 0; k < kStreams; ++k) {
            const Rng stream(rng());
            s0_[k] = stream.s_[0];
            s1_[k] = stream.s_[1];
            s2_[k] = stream.s_[2];
            s3_[k] = stream.s_[3];
        }
    }
    // Writes `groups` groups of kStreams draws as 16-bit lanes, four per draw, lowest first (the
    // draws' bytes, little-endian): draw g * kStreams + k is stream k's g-th. The states are held in
    // registers as vectors of GCC's vector extension (an array of them is not reliably kept in
    // registers): four of 16 bytes each word, or two of 32 with AVX.
    void fill(uint16_t* lanes, Index groups) {
        static_assert(std::endian::native == std::endian::little, "lanes are a draw's bytes, lowest first");
#ifdef __AVX__
        constexpr int Bytes = 32;
#else
        constexpr int Bytes = 16;
#endif
        constexpr int L = Bytes / 8, NV = kStreams / L;
        typedef uint64_t V __attribute__((vector_size(Bytes), aligned(2), may_alias));
        V a[NV], b[NV], c[NV], d[NV];
        for (int v = 0; v < NV; ++v) {
            std::memcpy(&a[v], s0_ + v * L, Bytes);
            std::memcpy(&b[v], s1_ + v * L, Bytes);
            std::memcpy(&c[v], s2_ + v * L, Bytes);
            std::memcpy(&d[v], s3_ + v * L, Bytes);
        }
        for (Index g = 0; g < groups; ++g) {
            V* o = reinterpret_cast<V*>(lanes + 4 * g * kStreams);
#pragma GCC unroll 8
            for (int v = 0; v < NV; ++v) {
                const V x = b[v];
                const V x5 = (x << 2) + x, r = (x5 << 7) | (x5 >> 57);
                o[v] = (r << 3) + r; // rotl(x * 5, 7) * 9
                const V t = x << 17;
                c[v] ^= a[v];
                d[v] ^= x;
                b[v] = x ^ c[v];
                a[v] ^= d[v];
                c[v] ^= t;
                d[v] = (d[v] << 45) | (d[v] >> 19);
            }
        }
        for (int v = 0; v < NV; ++v) {
            std::memcpy(s0_ + v * L, &a[v], Bytes);
            std::memcpy(s1_ + v * L, &b[v], Bytes);
            std::memcpy(s2_ + v * L, &c[v], Bytes);
            std::memcpy(s3_ + v * L, &d[v], Bytes);
        }
    }

private:
    uint64_t s0_[kStreams], s1_[kStreams], s2_[kStreams], s3_[kStreams];
};

// Calls use(i0, lanes, count) over [0, n) in chunks: lanes[k] is the 16-bit draw of element i0 + k.
// Each 64-bit draw of DropoutStreams is four 16-bit lanes, lowest first, and a chunk's draws come
// first, so that the pass over its lanes is a loop the compiler vectorises.
template <typename Use> void forEachDropoutChunk(Index n, Rng& rng, Use&& use) {
    constexpr Index kLanes = 1024; // a multiple of 4 * DropoutStreams::kStreams
    alignas(64) uint16_t lanes[kLanes];
    DropoutStreams streams(rng);
    for (Index i0 = 0; i0 < n; i0 += kLanes) {
        const Index count = std::min(n - i0, kLanes);
        streams.fill(lanes, (count + 4 * DropoutStreams::kStreams - 1) / (4 * DropoutStreams::kStreams));
        use(i0, lanes, count);
    }
}

// A lane at or above this is kept: p resolved to 1/65536.
inline uint16_t dropoutThreshold(double p) {
    return uint16_t(std::min(p, 65535.0 / 65536.0) * 65536.0);
}

// Calls body(i, multiplier) for every i in [0, n): the dropout multiplier of element i, 0 with
// probability p, else 1/(1-p), from forEachDropoutChunk's draws. A chunk's calls form one SIMD loop, so
// body must treat each i on its own (body's pointers are copied into locals: as the closure's members
// they could alias its stores and be reloaded, which keeps the loop scalar).
template <typename S, typename Body> void forEachDropoutMultiplier(Index n, double p, Rng& rng, Body body) {
    const uint16_t threshold = dropoutThreshold(p);
    const S keep = S(1.0 / (1.0 - p));
    forEachDropoutChunk(n, rng, [=](Index i0, const uint16_t* lanes, Index count) {
        const uint16_t t = threshold;
        const S k1 = keep;
        const Body use = body;
#pragma omp simd
        for (Index k = 0; k < count; ++k)
            use(i0 + k, lanes[k] >= t ? k1 : S(0));
    });
}

// Fills m[0, n) with the dropout multipliers: 0 with probability p, else 1/(1-p).
template <typename S> void dropoutFill(S* m, Index n, double p, Rng& rng) {
    forEachDropoutMultiplier<S>(n, p, rng, [m](Index i, S keep) { m[i] = keep; });
}

// Fills `mask` with 0 (probability p) or 1/(1-p); all ones when p == 0 or not training.
template <typename S>
void dropoutMask(Mat<S>& mask, Index rows, Index cols, double p, bool training, Rng& rng) {
    mask.resize(rows, cols);
    if (!training || p <= 0)
        mask.setOnes();
    else
        dropoutFill(mask.data(), rows * cols, p, rng);
}

// y = x + a * m over n values, m the dropout multipliers (0 with probability p, else 1/(1-p)) drawn as
// dropoutFill draws them and stored for the backward pass: the draws, the mask and the sum in one pass.
template <typename S> void addDropped(S* y, const S* x, const S* a, S* m, Index n, double p, Rng& rng) {
    forEachDropoutMultiplier<S>(n, p, rng, [y, x, a, m](Index i, S keep) {
        m[i] = keep;
        y[i] = x[i] + a[i] * keep;
    });
}

// x = ReLU(x) * dropout multipliers, in one pass, without storing the multipliers: the caller can tell
// them afterwards from x itself (where x is positive the multiplier was 1/(1-p)). Same draws as
// dropoutFill.
template <typename S> void reluDropoutInPlace(S* x, Index n, double p, Rng& rng) {
    forEachDropoutMultiplier<S>(
        n, p, rng, [x](Index i, S keep) { x[i] = x[i] > S(0) && keep > S(0) ? x[i] * keep : S(0); });
}

// Row-wise layer norm with learned gain and bias (eps 1e-5, biased variance, as torch.nn.LayerNorm).
template <typename S> struct LayerNorm {
    struct Cache {
        Mat<S> xhat; // (N, C)
        Vec<S> rstd; // (N)
    };
    static constexpr double kEps = 1e-5;

    // y = xhat * gain + bias. Plain loops over rows: at C = 48..256 a row is a few SIMD packets, and
    // one pass each for the mean, the variance and the output beats Eigen's per-row expressions.
    template <typename GT, typename BT>
    static void forward(const Mat<S>& x, const GT& gain, const BT& bias, Mat<S>& y, Cache& c) {
        const Index n = x.rows(), C = x.cols();
        c.xhat.resize(n, C);
        c.rstd.resize(n);
        y.resize(n, C);
        const S* g = gain.data();
        const S* b = bias.data();
        const S invC = S(1) / S(C);
        // Pointers captured by value: stores of floats cannot alias them.
        const S* xd = x.data();
        S* hd = c.xhat.data();
        S* yd = y.data();
        S* rs = c.rstd.data();
        forRowRanges(n, C, [=](Index r0, Index r1) {
            for (Index i = r0; i < r1; ++i) {
                const S* xi = xd + i * C;
                S* hi = hd + i * C;
                S* yi = yd + i * C;
                S sum = 0;
#pragma omp simd reduction(+ : sum)
                for (Index j = 0; j < C; ++j)
                    sum += xi[j];
                const S mean = sum * invC;
                S sq = 0;
#pragma omp simd reduction(+ : sq)
                for (Index j = 0; j < C; ++j)
                    sq += (xi[j] - mean) * (xi[j] - mean);
                const S rstd = S(1) / std::sqrt(sq * invC + S(kEps));
                rs[i] = rstd;
#pragma omp simd
                for (Index j = 0; j < C; ++j) {
                    hi[j] = (xi[j] - mean) * rstd;
                    yi[j] = hi[j] * g[j] + b[j];
                }
            }
        });
    }

    // dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = dy * gain
    template <typename GT, typename DGT, typename DBT>
    static void backward(const Mat<S>& dy, const GT& gain, DGT&& dgain, DBT&& dbias, const Cache& c,
                         Mat<S>& dx) {
        const Index C = dy.cols();
        dx.resize(dy.rows(), C);
        S* dxd = dx.data();
        backwardEach(dy, gain, dgain, dbias, c, [=](Index i, Index j, S v) { dxd[i * C + j] = v; });
    }

    // As backward, with each value of dx handed to store(row, column, value) where it is computed, so
    // that a caller adding dx into other matrices needs no pass of its own over dx.
    template <typename GT, typename DGT, typename DBT, typename Store>
    static void backwardEach(const Mat<S>& dy, const GT& gain, DGT&& dgain, DBT&& dbias, const Cache& c,
                             Store store) {
        const Index n = dy.rows(), C = dy.cols();
        const S* g = gain.data();
        S* dg = dgain.data();
        S* db = dbias.data();
        const S invC = S(1) / S(C);
        if (splitOverThreads(n * C)) {
            // dx row by row on every thread, then the gain and bias gradients by column ranges.
#pragma omp parallel for schedule(static)
            for (Index i = 0; i < n; ++i)
                backwardRow<false>(i, C, dy.data() + i * C, c.xhat.data() + i * C, g, dg, db, invC, c.rstd(i),
                                   store);
            forColumnRanges(n, C, [&](Index j0, Index j1) {
                for (Index i = 0; i < n; ++i) {
                    const S* dyi = dy.data() + i * C;
                    const S* hi = c.xhat.data() + i * C;
#pragma omp simd
                    for (Index j = j0; j < j1; ++j) {
                        dg[j] += dyi[j] * hi[j];
                        db[j] += dyi[j];
                    }
                }
            });
            return;
        }
        for (Index i = 0; i < n; ++i)
            backwardRow<true>(i, C, dy.data() + i * C, c.xhat.data() + i * C, g, dg, db, invC, c.rstd(i),
                              store);
    }

private:
    // dx of row i, handed to store. With AddParamGrads the row's gain and bias gradients are added to
    // dg and db in the same pass over dy (one thread: no other row writes them meanwhile).
    template <bool AddParamGrads, typename Store>
    static void backwardRow(Index i, Index C, const S* dyi, const S* hi, const S* g, S* dg, S* db, S invC,
                            S rstd, Store& store) {
        S m1 = 0, m2 = 0;
#pragma omp simd reduction(+ : m1, m2)
        for (Index j = 0; j < C; ++j) {
            if constexpr (AddParamGrads) {
                dg[j] += dyi[j] * hi[j];
                db[j] += dyi[j];
            }
            const S dxhat = dyi[j] * g[j];
            m1 += dxhat;
            m2 += dxhat * hi[j];
        }
        m1 *= invC;
        m2 *= invC;
#pragma omp simd
        for (Index j = 0; j < C; ++j)
            store(i, j, rstd * (dyi[j] * g[j] - m1 - hi[j] * m2));
    }
};

} // namespace ndr

// Small building blocks shared by the layers: linear maps, layer norm, the scalar activations and the
// passes split over threads (dropout masks: dropout.h). Each forward stores in its cache exactly what
// its backward needs; backward accumulates.
#pragma once

#include "core/nn/dropout.h"
#include "core/nn/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <omp.h>
#include <random>
#include <type_traits>
#include <vector>

namespace ndr {

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

// out[e] = value(e) over a row-major (rows, cols) matrix, and db += the column sums of out: on one
// thread in one pass, row by row; split over threads, the values by ranges of rows, then the sums.
// value may read out[e] itself (an update in place).
template <typename S, typename Value>
void mapWithColumnSums(Index rows, Index cols, S* out, S* db, Value value) {
    if (splitOverThreads(rows * cols)) {
        forRowRanges(rows, cols, [=](Index r0, Index r1) {
            // A local copy: the closure's own copy could alias out's stores and would be reloaded.
            const Value v = value;
#pragma omp simd
            for (Index e = r0 * cols; e < r1 * cols; ++e)
                out[e] = v(e);
        });
        addColumnSums(out, rows, cols, cols, db);
        return;
    }
    for (Index i = 0; i < rows; ++i) {
        const Index r = i * cols;
#pragma omp simd
        for (Index j = 0; j < cols; ++j) {
            out[r + j] = value(r + j);
            db[j] += out[r + j];
        }
    }
}

// out = d * mask, and db += the column sums of out.
template <typename S> void maskWithBiasGrad(const Mat<S>& d, const Mat<S>& mask, Mat<S>& out, S* db) {
    out.resize(d.rows(), d.cols());
    const S *dd = d.data(), *md = mask.data();
    mapWithColumnSums(d.rows(), d.cols(), out.data(), db, [dd, md](Index e) { return dd[e] * md[e]; });
}

// Every entry of `w` from N(0, 1): the models' token embeddings.
template <typename S, typename WT, typename InitRng> void standardNormal(WT&& w, InitRng& rng) {
    std::normal_distribution<double> normal(0.0, 1.0);
    for (Index i = 0; i < w.size(); ++i)
        w.data()[i] = S(normal(rng));
}

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

// The per-(example, head) products of attention, (T, T) by (T, D) on strided row-major blocks, as plain
// loops. At CTL lengths (T <= ~12) an Eigen lazy product on strided maps spends as long on its setup as
// on the arithmetic; these loops vectorise along D. The Eigen versions are kept in ndr::reference as
// the plain statement of each product and the oracle of tests/test_kernels.cpp.
#pragma once

#include "core/nn/tensor.h"

namespace ndr {

// A row-major block inside a bigger row-major buffer: element (i, j) is data[i * stride + j].
template <typename S> struct Block {
    S* data = nullptr;
    int rows = 0, cols = 0;
    Index stride = 0;
    S* row(int i) const { return data + Index(i) * stride; }
};
template <typename S> Block<S> blockOf(S* data, Index stride, int rows, int cols) {
    return Block<S>{data, rows, cols, stride};
}

// c (m, n) = scale * a (m, k) b (n, k)^T      q k^T, dMixed v^T
template <typename S> inline void productABt(Block<const S> a, Block<const S> b, S scale, Block<S> c) {
    const int m = a.rows, n = b.rows, k = a.cols;
    for (int i = 0; i < m; ++i) {
        const S* ai = a.row(i);
        S* ci = c.row(i);
        for (int j = 0; j < n; ++j) {
            const S* bj = b.row(j);
            S sum = 0;
            // The reduction may be reordered into SIMD lanes (deterministic for a given k).
#pragma omp simd reduction(+ : sum)
            for (int t = 0; t < k; ++t)
                sum += ai[t] * bj[t];
            ci[j] = scale * sum;
        }
    }
}

namespace detail {

// The two products below sum rows of b into rows of c. With the row width NW known at compile time (a
// head width) the row being summed stays in registers; otherwise it is loaded and stored per term.
// Both sum in the same order.
template <int NW, typename S>
inline void productABFixed(Block<const S> a, Block<const S> b, S scale, Block<S> c, bool accumulate) {
    for (int i = 0; i < a.rows; ++i) {
        const S* ai = a.row(i);
        S* ci = c.row(i);
        S acc[NW];
        for (int t = 0; t < NW; ++t)
            acc[t] = accumulate ? ci[t] : S(0);
        for (int j = 0; j < a.cols; ++j) {
            const S w = scale * ai[j];
            const S* bj = b.row(j);
            for (int t = 0; t < NW; ++t)
                acc[t] += w * bj[t];
        }
        for (int t = 0; t < NW; ++t)
            ci[t] = acc[t];
    }
}

template <int NW, typename S>
inline void productAtBFixed(Block<const S> a, Block<const S> b, S scale, Block<S> c, bool accumulate) {
    for (int j = 0; j < a.cols; ++j) {
        S* cj = c.row(j);
        S acc[NW];
        for (int t = 0; t < NW; ++t)
            acc[t] = accumulate ? cj[t] : S(0);
        for (int i = 0; i < a.rows; ++i) {
            const S w = scale * a.row(i)[j];
            const S* bi = b.row(i);
            for (int t = 0; t < NW; ++t)
                acc[t] += w * bi[t];
        }
        for (int t = 0; t < NW; ++t)
            cj[t] = acc[t];
    }
}

} // namespace detail

// c (m, n) = scale * a (m, k) b (k, n), or += when accumulate      A v, dS k
template <typename S>
inline void productAB(Block<const S> a, Block<const S> b, S scale, Block<S> c, bool accumulate) {
    switch (b.cols) {
    case 8:
        return detail::productABFixed<8>(a, b, scale, c, accumulate);
    case 12:
        return detail::productABFixed<12>(a, b, scale, c, accumulate);
    case 16:
        return detail::productABFixed<16>(a, b, scale, c, accumulate);
    case 32:
        return detail::productABFixed<32>(a, b, scale, c, accumulate);
    case 64:
        return detail::productABFixed<64>(a, b, scale, c, accumulate);
    default:
        break;
    }
    const int m = a.rows, k = a.cols, n = b.cols;
    for (int i = 0; i < m; ++i) {
        const S* ai = a.row(i);
        S* ci = c.row(i);
        if (!accumulate)
            for (int t = 0; t < n; ++t)
                ci[t] = S(0);
        for (int j = 0; j < k; ++j) {
            const S w = scale * ai[j];
            const S* bj = b.row(j);
#pragma omp simd
            for (int t = 0; t < n; ++t)
                ci[t] += w * bj[t];
        }
    }
}

// c (k, n) = scale * a (m, k)^T b (m, n), or += when accumulate      A^T dMixed, dS^T q
template <typename S>
inline void productAtB(Block<const S> a, Block<const S> b, S scale, Block<S> c, bool accumulate) {
    switch (b.cols) {
    case 8:
        return detail::productAtBFixed<8>(a, b, scale, c, accumulate);
    case 12:
        return detail::productAtBFixed<12>(a, b, scale, c, accumulate);
    case 16:
        return detail::productAtBFixed<16>(a, b, scale, c, accumulate);
    case 32:
        return detail::productAtBFixed<32>(a, b, scale, c, accumulate);
    case 64:
        return detail::productAtBFixed<64>(a, b, scale, c, accumulate);
    default:
        break;
    }
    const int m = a.rows, k = a.cols, n = b.cols;
    for (int j = 0; j < k; ++j) {
        S* cj = c.row(j);
        if (!accumulate)
            for (int t = 0; t < n; ++t)
                cj[t] = S(0);
        for (int i = 0; i < m; ++i) {
            const S w = scale * a.row(i)[j];
            const S* bi = b.row(i);
#pragma omp simd
            for (int t = 0; t < n; ++t)
                cj[t] += w * bi[t];
        }
    }
}

namespace reference {

template <typename S> using BlockMap = Eigen::Map<Mat<S>, 0, Eigen::OuterStride<>>;
template <typename S> using ConstBlockMap = Eigen::Map<const Mat<S>, 0, Eigen::OuterStride<>>;
template <typename S> ConstBlockMap<S> map(Block<const S> b) {
    return ConstBlockMap<S>(b.data, b.rows, b.cols, Eigen::OuterStride<>(b.stride));
}
template <typename S> BlockMap<S> map(Block<S> b) {
    return BlockMap<S>(b.data, b.rows, b.cols, Eigen::OuterStride<>(b.stride));
}

template <typename S> void productABt(Block<const S> a, Block<const S> b, S scale, Block<S> c) {
    map(c).noalias() = scale * map(a).lazyProduct(map(b).transpose());
}
template <typename S>
void productAB(Block<const S> a, Block<const S> b, S scale, Block<S> c, bool accumulate) {
    if (accumulate)
        map(c).noalias() += (scale * map(a)).lazyProduct(map(b));
    else
        map(c).noalias() = (scale * map(a)).lazyProduct(map(b));
}
template <typename S>
void productAtB(Block<const S> a, Block<const S> b, S scale, Block<S> c, bool accumulate) {
    if (accumulate)
        map(c).noalias() += (scale * map(a).transpose()).lazyProduct(map(b));
    else
        map(c).noalias() = (scale * map(a).transpose()).lazyProduct(map(b));
}

} // namespace reference

} // namespace ndr

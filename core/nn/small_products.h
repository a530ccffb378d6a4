// The per-(example, head) products of attention, (T, T) by (T, D) on strided row-major blocks, as plain
// loops. At CTL lengths (T <= ~12) an Eigen lazy product on strided maps spends as long on its setup as
// on the arithmetic; these loops vectorise along D, and q k^T on long examples along the keys
// (docs/design.md §2). The Eigen versions are kept in ndr::reference as the plain statement of each
// product and the oracle of tests/test_kernels.cpp.
#pragma once

#include "core/nn/tensor.h"

#include <type_traits>

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

namespace detail {

// The kernels of the products below for a row width NW known at compile time (a head width) work on
// SIMD vectors of GCC's vector extension held in registers: an array of scalars is not reliably kept
// in registers (at NW = 32 GCC keeps it on the stack, two loads and a store per term).
//
// The two that sum rows of b into rows of c (A v, dS k, and their transposed forms) hold two output
// rows at a time where registers allow, so that each row of b is loaded once for both; every output
// element sums its terms in the same order as the general loops, which load and store the output row
// per term, so all forms give the same bits.

// A vector of S over 32 bytes when the build has AVX and a head's row fills whole ones, else over 16
// (SSE2 splits a 32-byte vector into memory round trips).
template <typename S, int NW> constexpr int vectorBytes() {
#ifdef __AVX__
    return (NW * int(sizeof(S))) % 32 == 0 ? 32 : 16;
#else
    return 16;
#endif
}
// Two output rows at a time while their vectors take at most 16 registers (half of AVX-512's, all of
// AVX2's), else one (a head of 64 floats on SSE2).
template <typename S, int NW> constexpr int rowBlock() {
    return 2 * NW * int(sizeof(S)) / vectorBytes<S, NW>() <= 16 ? 2 : 1;
}

// Loads and stores through it may be unaligned (a head's columns start anywhere in a row) and alias S.
template <typename S, int Bytes> struct Vec {
    typedef S type __attribute__((vector_size(Bytes), aligned(sizeof(S)), may_alias));
};

// Rows [i, i + R) of c (+)= scale * op(a) b, where op(a) is a, or a^T when Transposed: term k of row
// i + r is op(a)(i + r, k) times row k of b; NV vectors of L lanes per row.
template <int NW, int R, bool Transposed, typename S>
inline void sumRows(Block<const S> a, Block<const S> b, S scale, Block<S> c, bool accumulate, int i) {
    constexpr int Bytes = vectorBytes<S, NW>(), L = Bytes / int(sizeof(S)), NV = NW / L;
    using V = typename Vec<S, Bytes>::type;
    V acc[R][NV];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
        for (int v = 0; v < NV; ++v)
            acc[r][v] = accumulate ? *reinterpret_cast<const V*>(c.row(i + r) + v * L) : V{};
    const int terms = Transposed ? a.rows : a.cols;
    for (int k = 0; k < terms; ++k) {
        const V* x = reinterpret_cast<const V*>(b.row(k));
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) {
            const S w = scale * (Transposed ? a.row(k)[i + r] : a.row(i + r)[k]);
#pragma GCC unroll 16
            for (int v = 0; v < NV; ++v)
                acc[r][v] += w * x[v];
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
        for (int v = 0; v < NV; ++v)
            *reinterpret_cast<V*>(c.row(i + r) + v * L) = acc[r][v];
}

// c (+)= scale * op(a) b, R rows of c at a time.
template <int NW, bool Transposed, typename S>
inline void sumRowsFixed(Block<const S> a, Block<const S> b, S scale, Block<S> c, bool accumulate) {
    constexpr int R = rowBlock<S, NW>();
    const int rows = Transposed ? a.cols : a.rows;
    int i = 0;
    for (; i + R <= rows; i += R)
        sumRows<NW, R, Transposed>(a, b, scale, c, accumulate, i);
    for (; i < rows; ++i)
        sumRows<NW, 1, Transposed>(a, b, scale, c, accumulate, i);
}

// The lanes of v summed: lane-wise partial sums are how the products below reduce.
template <typename S, int L, typename V> inline S laneSum(const V& v) {
    S sum = 0;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l)
        sum += v[l];
    return sum;
}

// c (m, n) = scale * a b^T with the row width NW of a and b known at compile time: a's row is held
// in registers and each dot product is a vector of lane-wise partial sums (over t = l, l + L, ...),
// then the sum of its lanes; two columns of c at a time.
template <int NW, typename S>
inline void productABtFixed(Block<const S> a, Block<const S> b, S scale, Block<S> c) {
    constexpr int Bytes = vectorBytes<S, NW>(), L = Bytes / int(sizeof(S)), NV = NW / L;
    using V = typename Vec<S, Bytes>::type;
    for (int i = 0; i < a.rows; ++i) {
        const V* ar = reinterpret_cast<const V*>(a.row(i));
        V ai[NV];
#pragma GCC unroll 16
        for (int v = 0; v < NV; ++v)
            ai[v] = ar[v];
        S* ci = c.row(i);
        int j = 0;
        for (; j + 2 <= b.rows; j += 2) {
            const V *b0 = reinterpret_cast<const V*>(b.row(j)),
                    *b1 = reinterpret_cast<const V*>(b.row(j + 1));
            V s0 = ai[0] * b0[0], s1 = ai[0] * b1[0];
#pragma GCC unroll 16
            for (int v = 1; v < NV; ++v) {
                s0 += ai[v] * b0[v];
                s1 += ai[v] * b1[v];
            }
            ci[j] = scale * laneSum<S, L>(s0);
            ci[j + 1] = scale * laneSum<S, L>(s1);
        }
        if (j < b.rows) {
            const V* bj = reinterpret_cast<const V*>(b.row(j));
            V s0 = ai[0] * bj[0];
#pragma GCC unroll 16
            for (int v = 1; v < NV; ++v)
                s0 += ai[v] * bj[v];
            ci[j] = scale * laneSum<S, L>(s0);
        }
    }
}

#ifdef __AVX__
// b^T's copy in productABtByColumns is at most kTransposedMax values on the stack (32 KiB of float).
constexpr int kTransposedMax = 8192;
// Values of S in one 32-byte SIMD vector.
template <typename S> constexpr int kLanes32 = 32 / int(sizeof(S));

// c (m, n) = scale * a b^T with the columns of c along 32-byte SIMD vectors of L lanes: b (n, k) is
// copied transposed once, zero-padded to NJ vectors, and row i of c is the sum over t of a(i, t) times
// row t of the copy. Each element sums its k terms in order, one multiply-add per term and no sum
// across lanes (productABtFixed ends each dot product with one); the copy's k * n moves are shared by
// the block's m rows.
// Out of line, so that the callers' frames and the short blocks' path do not carry its 32 KiB copy.
template <int NJ, typename S>
[[gnu::noinline]] void productABtByColumns(Block<const S> a, Block<const S> b, S scale, Block<S> c) {
    constexpr int L = kLanes32<S>, W = NJ * L;
    using V = typename Vec<S, 32>::type;
    const int k = a.cols, n = b.rows, whole = n / L, tail = n % L;
    alignas(64) S bT[kTransposedMax];
    if (tail) // the zeros past column n, in the last vector of each row
        for (int t = 0; t < k; ++t)
            *reinterpret_cast<V*>(bT + t * W + (NJ - 1) * L) = V{};
    for (int j = 0; j < n; ++j) {
        const S* bj = b.row(j);
        for (int t = 0; t < k; ++t)
            bT[t * W + j] = bj[t];
    }
    // RR rows of c at a time: RR * NJ independent sums (at most 12, in registers) hide the multiply-add's
    // latency, and each vector of the copy is loaded once for RR rows.
    auto rows = [&](auto rowCount, int i) {
        constexpr int RR = decltype(rowCount)::value;
        V acc[RR][NJ];
#pragma GCC unroll 8
        for (int r = 0; r < RR; ++r)
#pragma GCC unroll 8
            for (int v = 0; v < NJ; ++v)
                acc[r][v] = V{};
        for (int t = 0; t < k; ++t) {
            const V* bt = reinterpret_cast<const V*>(bT + t * W);
#pragma GCC unroll 8
            for (int r = 0; r < RR; ++r) {
                const S w = a.row(i + r)[t];
#pragma GCC unroll 8
                for (int v = 0; v < NJ; ++v)
                    acc[r][v] += w * bt[v];
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < RR; ++r) {
            S* ci = c.row(i + r);
#pragma GCC unroll 8
            for (int v = 0; v < NJ; ++v)
                if (v < whole)
                    *reinterpret_cast<V*>(ci + v * L) = scale * acc[r][v];
            if (tail) {
                const V last = scale * acc[r][NJ - 1];
                for (int j = 0; j < tail; ++j)
                    ci[whole * L + j] = last[j];
            }
        }
    };
    constexpr int R = 12 / NJ > 8 ? 8 : 12 / NJ;
    int i = 0;
    for (; i + R <= a.rows; i += R)
        rows(std::integral_constant<int, R>{}, i);
    if constexpr (R > 4)
        for (; i + 4 <= a.rows; i += 4)
            rows(std::integral_constant<int, 4>{}, i);
    if constexpr (R > 2)
        for (; i + 2 <= a.rows; i += 2)
            rows(std::integral_constant<int, 2>{}, i);
    for (; i < a.rows; ++i)
        rows(std::integral_constant<int, 1>{}, i);
}

// productABtByColumns at NJ vectors when n needs that many, else at more up to eight.
template <int NJ, typename S>
inline void productABtColumnsFrom(int nj, Block<const S> a, Block<const S> b, S scale, Block<S> c) {
    if constexpr (NJ < 8)
        if (nj > NJ)
            return productABtColumnsFrom<NJ + 1>(nj, a, b, scale, c);
    productABtByColumns<NJ>(a, b, scale, c);
}
#endif

// productABtByColumns on a build with AVX, where n spans two to eight vectors, b^T's copy fits, and
// at least 12 rows share the copy; returns whether it ran. With fewer keys or rows the copy and the
// padding cost more than productABtFixed's sums across lanes (docs/results/bench/dot-columns-micro.cpp),
// and on 16-byte vectors those are cheap enough that it gains nothing.
template <typename S> inline bool productABtColumns(Block<const S> a, Block<const S> b, S scale, Block<S> c) {
#ifdef __AVX__
    constexpr int L = kLanes32<S>;
    const int nj = (b.rows + L - 1) / L;
    if (b.rows < 2 * L || nj > 8 || a.rows < 12 || a.cols * nj * L > kTransposedMax)
        return false;
    productABtColumnsFrom<2>(nj, a, b, scale, c);
    return true;
#else
    (void)a, (void)b, (void)scale, (void)c;
    return false;
#endif
}

// Calls f(std::integral_constant<int, W>{}) when `width` is one of the kernels' widths W; returns
// whether it did.
template <typename F> bool withKernelWidth(int width, F&& f) {
    switch (width) {
    case 8:
        return f(std::integral_constant<int, 8>{}), true;
    case 12:
        return f(std::integral_constant<int, 12>{}), true;
    case 16:
        return f(std::integral_constant<int, 16>{}), true;
    case 32:
        return f(std::integral_constant<int, 32>{}), true;
    case 64:
        return f(std::integral_constant<int, 64>{}), true;
    default:
        return false;
    }
}

// The columns [t0, t0 + n) of a row-major block.
template <typename S> Block<S> columns(Block<S> m, int t0, int n) {
    return Block<S>{m.data + t0, m.rows, n, m.stride};
}

// c (+)= scale * op(a) b at any row width: the kernels where the width is one of theirs, slices of 32
// columns for a wider head (the paper's one head of 256), else the general loops, which load and store
// the output row per term. Every output element sums its terms in order in all of them.
template <bool Transposed, typename S>
inline void sumRowsInto(Block<const S> a, Block<const S> b, S scale, Block<S> c, bool accumulate) {
    if (withKernelWidth(b.cols, [&](auto w) { sumRowsFixed<w(), Transposed>(a, b, scale, c, accumulate); }))
        return;
    if (b.cols % 32 == 0) {
        for (int t0 = 0; t0 < b.cols; t0 += 32)
            sumRowsFixed<32, Transposed>(a, columns(b, t0, 32), scale, columns(c, t0, 32), accumulate);
        return;
    }
    const int rows = Transposed ? a.cols : a.rows, terms = Transposed ? a.rows : a.cols, n = b.cols;
    for (int i = 0; i < rows; ++i) {
        S* ci = c.row(i);
        if (!accumulate)
            for (int t = 0; t < n; ++t)
                ci[t] = S(0);
        for (int k = 0; k < terms; ++k) {
            const S w = scale * (Transposed ? a.row(k)[i] : a.row(i)[k]);
            const S* bk = b.row(k);
#pragma omp simd
            for (int t = 0; t < n; ++t)
                ci[t] += w * bk[t];
        }
    }
}

} // namespace detail

// c (m, n) = scale * a (m, k) b (n, k)^T      q k^T, dMixed v^T
template <typename S> inline void productABt(Block<const S> a, Block<const S> b, S scale, Block<S> c) {
    if (detail::productABtColumns(a, b, scale, c))
        return;
    if (detail::withKernelWidth(a.cols, [&](auto w) { detail::productABtFixed<w()>(a, b, scale, c); }))
        return;
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

// c (m, n) = scale * a (m, k) b (k, n), or += when accumulate      A v, dS k
template <typename S>
inline void productAB(Block<const S> a, Block<const S> b, S scale, Block<S> c, bool accumulate) {
    detail::sumRowsInto<false>(a, b, scale, c, accumulate);
}

// c (k, n) = scale * a (m, k)^T b (m, n), or += when accumulate      A^T dMixed, dS^T q
template <typename S>
inline void productAtB(Block<const S> a, Block<const S> b, S scale, Block<S> c, bool accumulate) {
    detail::sumRowsInto<true>(a, b, scale, c, accumulate);
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

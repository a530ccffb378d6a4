// Storage conventions for the whole core: every activation is a row-major matrix, one row per
// (example, position) pair, with the dimension letters used in every shape comment.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <vector>

namespace ndr {

// Dimension letters used in shape comments throughout core/:
//   B batch, T positions (padded), N = B*T rows, C model width (d_model), F feed-forward width (d_ff),
//   H heads, D per-head width (C / H), S output symbols, V vocabulary.
// Row index of (b, t) is b*T + t: an example's positions are consecutive rows.

template <typename Scalar> using Mat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename Scalar> using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
template <typename Scalar> using RowVec = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;

template <typename Scalar> using MatMap = Eigen::Map<Mat<Scalar>>;
template <typename Scalar> using ConstMatMap = Eigen::Map<const Mat<Scalar>>;
template <typename Scalar> using VecMap = Eigen::Map<Vec<Scalar>>;
template <typename Scalar> using RowVecMap = Eigen::Map<RowVec<Scalar>>;

using Index = Eigen::Index;

// Heap buffers viewed through Eigen maps are aligned like Eigen's own matrices: the summation order of
// vectorised reductions depends on the address alignment, and runs must repeat bit for bit.
template <typename Scalar> using AlignedVector = std::vector<Scalar, Eigen::aligned_allocator<Scalar>>;

// out (rows.size(), cols) = rows `rows` of m, in that order.
template <typename S> void gatherRows(const Mat<S>& m, const std::vector<Index>& rows, Mat<S>& out) {
    out.resize(Index(rows.size()), m.cols());
    for (size_t k = 0; k < rows.size(); ++k)
        out.row(Index(k)) = m.row(rows[k]);
}

} // namespace ndr

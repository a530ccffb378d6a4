// What the geometric and softmax attention layers share: the layout of their per-example maps and the
// passes over all of a batch's maps (docs/design.md §2).
#pragma once

#include "core/nn/layers.h"

#include <vector>

namespace ndr::attention_maps {

// blocks (B + 1): the first element of each example's H maps of (len_b, len_b), one after another.
inline void setMapBlocks(const BatchShape& shape, int heads, std::vector<size_t>& blocks) {
    blocks.resize(size_t(shape.batch) + 1);
    blocks[0] = 0;
    for (int b = 0; b < shape.batch; ++b)
        blocks[b + 1] = blocks[b] + size_t(heads) * shape.lengths[b] * shape.lengths[b];
}

// v = exp(v) over n values: one vectorised pass (split over the threads when long enough).
template <typename S> void expInPlace(S* v, Index n) {
    forRowRanges(n, 1, [&](Index e0, Index e1) {
        Eigen::Map<Eigen::Array<S, Eigen::Dynamic, 1>> a(v + e0, e1 - e0);
        a = a.exp();
    });
}

} // namespace ndr::attention_maps

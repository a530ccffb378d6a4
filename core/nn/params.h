// One contiguous buffer of parameters and one of gradients, with a named (rows, cols) view per tensor,
// so that the optimiser, clipping and checkpoints are single loops over flat arrays.
#pragma once

#include "core/nn/tensor.h"
#include "core/records/records.h"

#include <cassert>
#include <string>
#include <vector>

namespace ndr {

template <typename Scalar> class ParamStore {
public:
    // Declares a tensor; valid only before finalize(). Returns its id.
    int add(const std::string& name, int rows, int cols) {
        assert(values_.empty());
        offsets_.push_back(size_);
        layout_.push_back({name, rows, cols});
        size_ += size_t(rows) * cols;
        return int(layout_.size()) - 1;
    }
    // Allocates the buffers (zeros). Views stay valid for the store's lifetime.
    void finalize() {
        values_.assign(size_, Scalar(0));
        grads_.assign(size_, Scalar(0));
    }

    MatMap<Scalar> value(int id) {
        return {values_.data() + offsets_[id], layout_[id].rows, layout_[id].cols};
    }
    MatMap<Scalar> grad(int id) { return {grads_.data() + offsets_[id], layout_[id].rows, layout_[id].cols}; }
    const Scalar* valuePtr(int id) const { return values_.data() + offsets_[id]; }

    // Tensors first..last (inclusive) stacked by rows; they must share the column count and be
    // declared consecutively, which makes e.g. [Wq; Wkv; Wqp] one matrix for one product.
    MatMap<Scalar> valueRows(int first, int last) {
        return {values_.data() + offsets_[first], stackedRows(first, last), layout_[first].cols};
    }
    MatMap<Scalar> gradRows(int first, int last) {
        return {grads_.data() + offsets_[first], stackedRows(first, last), layout_[first].cols};
    }

    void zeroGrad() { std::fill(grads_.begin(), grads_.end(), Scalar(0)); }

    AlignedVector<Scalar>& values() { return values_; }
    const AlignedVector<Scalar>& values() const { return values_; }
    AlignedVector<Scalar>& grads() { return grads_; }
    const AlignedVector<Scalar>& grads() const { return grads_; }
    const std::vector<TensorInfo>& layout() const { return layout_; }
    size_t size() const { return size_; }
    size_t offset(int id) const { return offsets_[id]; }

private:
    int stackedRows(int first, int last) const {
        int rows = 0;
        for (int i = first; i <= last; ++i) {
            assert(layout_[i].cols == layout_[first].cols);
            assert(i == first ||
                   offsets_[i] == offsets_[i - 1] + size_t(layout_[i - 1].rows) * layout_[i - 1].cols);
            rows += layout_[i].rows;
        }
        return rows;
    }

    std::vector<TensorInfo> layout_;
    std::vector<size_t> offsets_;
    size_t size_ = 0;
    AlignedVector<Scalar> values_, grads_;
};

} // namespace ndr

// The sgemm reference of `ndr bench` (see gemm_reference.h).
#include "core/nn/gemm_reference.h"

namespace ndr {

GemmReference::GemmReference(const std::vector<GemmShape>& shapes) {
    // Values in [-0.5, 0.5): a product's speed does not depend on them (none is denormal), and
    // Random() would take seconds at the paper's sizes.
    auto filled = [](Index rows, Index cols) {
        return Mat<float>::NullaryExpr(
            rows, cols, [](Index i, Index j) { return float((i * 7 + j * 13) % 17) / 17.f - 0.5f; });
    };
    for (const auto& s : shapes) {
        a_.push_back(filled(s.m, s.k));
        b_.push_back(filled(s.k, s.n));
        c_.push_back(Mat<float>::Zero(s.m, s.n));
        flops_ += 2.0 * s.m * s.n * s.k;
    }
    pass(); // warm-up
}

void GemmReference::pass() {
    for (size_t i = 0; i < a_.size(); ++i)
        c_[i].noalias() = a_[i] * b_[i];
}

} // namespace ndr

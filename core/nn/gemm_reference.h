// Eigen's float GEMM alone on a list of product shapes: the reference `ndr bench` measures a training
// step against. It lives with the engine's numerics so that it is built for the same CPU level.
#pragma once

#include "core/nn/tensor.h"

#include <vector>

namespace ndr {

struct GemmShape {
    Index m, n, k; // (m, k) x (k, n)
};

class GemmReference {
public:
    // Makes the matrices of every shape once and runs one warm-up pass.
    explicit GemmReference(const std::vector<GemmShape>& shapes);
    double flops() const { return flops_; }
    // One product of every shape.
    void pass();

private:
    std::vector<Mat<float>> a_, b_, c_;
    double flops_ = 0;
};

} // namespace ndr

// AdamW with decoupled weight decay on every parameter, and global gradient-norm clipping; both are
// single loops over the flat parameter buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ndr {

struct AdamW {
    double learningRate = 1e-3, weightDecay = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    int64_t t = 0;           // updates done
    std::vector<float> m, v; // first and second moments, same layout as the parameters

    // p <- p (1 - lr wd);  m, v <- moving averages;  p <- p - lr mhat / (sqrt(vhat) + eps)
    void step(float* params, const float* grads, size_t n);
};

// Scales grads so their global L2 norm is at most maxNorm (maxNorm <= 0: no clipping). Returns the
// norm before clipping.
double clipGradNorm(float* grads, size_t n, double maxNorm);

} // namespace ndr

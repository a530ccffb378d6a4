// AdamW and gradient clipping over flat buffers (as torch.optim.AdamW and clip_grad_norm_).
#include "core/nn/optimizer.h"

#include <cmath>

namespace ndr {

void AdamW::step(float* p, const float* g, size_t n) {
    if (m.size() != n) {
        m.assign(n, 0.f);
        v.assign(n, 0.f);
    }
    ++t;
    const float b1 = float(beta1), b2 = float(beta2);
    const float decay = float(1.0 - learningRate * weightDecay);
    const float stepSize = float(learningRate / (1.0 - std::pow(beta1, double(t))));
    const float invBias2 = float(1.0 / std::sqrt(1.0 - std::pow(beta2, double(t))));
    const float e = float(eps);
    float* mm = m.data();
    float* vv = v.data();
    for (size_t i = 0; i < n; ++i) {
        p[i] *= decay;
        mm[i] = b1 * mm[i] + (1 - b1) * g[i];
        vv[i] = b2 * vv[i] + (1 - b2) * g[i] * g[i];
        p[i] -= stepSize * mm[i] / (std::sqrt(vv[i]) * invBias2 + e);
    }
}

double clipGradNorm(float* grads, size_t n, double maxNorm) {
    double sq = 0;
    for (size_t i = 0; i < n; ++i)
        sq += double(grads[i]) * grads[i];
    const double norm = std::sqrt(sq);
    if (maxNorm > 0 && norm > maxNorm) {
        const float scale = float(maxNorm / (norm + 1e-6));
        for (size_t i = 0; i < n; ++i)
            grads[i] *= scale;
    }
    return norm;
}

} // namespace ndr

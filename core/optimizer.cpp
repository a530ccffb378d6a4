// AdamW and gradient clipping over flat buffers (as torch.optim.AdamW and clip_grad_norm_).
#include "optimizer.h"

#include <cmath>

namespace ndr {

void AdamW::step(std::vector<float>& params, const std::vector<float>& grads) {
    if (m.size() != params.size()) {
        m.assign(params.size(), 0.f);
        v.assign(params.size(), 0.f);
    }
    ++t;
    const float b1 = float(beta1), b2 = float(beta2);
    const float decay = float(1.0 - learningRate * weightDecay);
    const float stepSize = float(learningRate / (1.0 - std::pow(beta1, double(t))));
    const float invBias2 = float(1.0 / std::sqrt(1.0 - std::pow(beta2, double(t))));
    const float e = float(eps);
    const size_t n = params.size();
    float* p = params.data();
    const float* g = grads.data();
    float* mm = m.data();
    float* vv = v.data();
    for (size_t i = 0; i < n; ++i) {
        p[i] *= decay;
        mm[i] = b1 * mm[i] + (1 - b1) * g[i];
        vv[i] = b2 * vv[i] + (1 - b2) * g[i] * g[i];
        p[i] -= stepSize * mm[i] / (std::sqrt(vv[i]) * invBias2 + e);
    }
}

double clipGradNorm(std::vector<float>& grads, double maxNorm) {
    double sq = 0;
    for (float g : grads) sq += double(g) * g;
    const double norm = std::sqrt(sq);
    if (maxNorm > 0 && norm > maxNorm) {
        const float scale = float(maxNorm / (norm + 1e-6));
        for (float& g : grads) g *= scale;
    }
    return norm;
}

} // namespace ndr

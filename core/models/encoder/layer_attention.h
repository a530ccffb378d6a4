// The attention of an encoder layer, of the kind its configuration names, chosen once when the layer is
// declared (docs/design.md §2): directional geometric attention, softmax attention, or softmax
// attention with relative positions (Transformer-XL style, or abs/rel). The layer calls it the same
// way whatever the kind.
#pragma once

#include "core/models/encoder/config.h"
#include "core/nn/attention.h"
#include "core/nn/relative_attention.h"

#include <variant>

namespace ndr {

template <typename S> class LayerAttention {
public:
    // The kind's own cache; forward() makes it of the declared kind.
    using Cache = std::variant<typename GeometricAttention<S>::Cache, typename SoftmaxAttention<S>::Cache,
                               typename RelativeAttention<S>::Cache>;

    void declare(ParamStore<S>& store, const std::string& prefix, const EncoderConfig& cfg) {
        const int C = cfg.dModel, H = cfg.heads;
        if (cfg.attention == AttentionKind::Geometric)
            impl_.template emplace<GeometricAttention<S>>().declare(store, prefix, C, H,
                                                                    cfg.geomNorm == GeomNorm::L1);
        else if (relativePositions(cfg.positional))
            impl_.template emplace<RelativeAttention<S>>().declare(store, prefix, C, H,
                                                                   cfg.positional == PositionalKind::AbsRel);
        else
            impl_.template emplace<SoftmaxAttention<S>>().declare(store, prefix, C, H);
    }
    template <typename InitRng> void init(ParamStore<S>& store, InitRng& rng) const {
        std::visit([&](const auto& a) { a.init(store, rng); }, impl_);
    }
    // out (N, C) from x (N, C); `dropout` is the kind's attention dropout; headWeights (N, H) scale each
    // head's output (head routing).
    void forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, bool training,
                 double dropout, Rng& rng, Cache& cache, Mat<S>& out, const Mat<S>* headWeights) const {
        std::visit(
            [&](const auto& a) {
                using Kind = std::decay_t<decltype(a)>;
                if (!std::holds_alternative<typename Kind::Cache>(cache))
                    cache.template emplace<typename Kind::Cache>();
                a.forward(store, x, shape, training, dropout, rng, std::get<typename Kind::Cache>(cache), out,
                          headWeights);
            },
            impl_);
    }
    // dx += the input gradient; parameter gradients accumulate; dHeadWeights receives the routing
    // weights' gradient when headWeights are given.
    void backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, const Cache& cache,
                  const Mat<S>& dOut, Mat<S>& dx, Mat<S>& scratch, const Mat<S>* headWeights,
                  Mat<S>* dHeadWeights) const {
        std::visit(
            [&](const auto& a) {
                using Kind = std::decay_t<decltype(a)>;
                a.backward(store, x, shape, std::get<typename Kind::Cache>(cache), dOut, dx, scratch, true,
                           headWeights, dHeadWeights);
            },
            impl_);
    }
    // The attention weights of a cache, per example (B, H, len_b, len_b) blocks.
    const AlignedVector<S>& weights(const Cache& cache) const {
        return std::visit([](const auto& c) -> const AlignedVector<S>& { return c.att; }, cache);
    }
    // The id of the output projection Wo.
    int outputWeight() const {
        return std::visit([](const auto& a) { return a.p.wo; }, impl_);
    }

private:
    std::variant<GeometricAttention<S>, SoftmaxAttention<S>, RelativeAttention<S>> impl_;
};

} // namespace ndr

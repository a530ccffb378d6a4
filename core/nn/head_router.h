// Learnable head routing (docs/design.md §2, "Head routing"): per token, a small gate network scores the
// attention heads, keeps the top k and turns the kept scores into weights that scale each head's output
// before the output projection; an entropy term on the weights is added to the loss. Forward and
// backward by hand; the top-k choice is a fixed mask in the backward pass.
#pragma once

#include "core/config/config.h"
#include "core/nn/attention.h"
#include "core/nn/params.h"
#include "core/nn/tensor.h"

#include <string>

namespace ndr {

template <typename S> struct HeadRouter {
    struct Params {
        int w1 = -1, b1 = -1, w2 = -1, b2 = -1;
    };
    struct Cache {
        Mat<S> pre;     // (N, C/2) W1 x + b1
        Mat<S> hidden;  // (N, C/2) GELU(pre)
        Mat<S> erfTerm; // (N, C/2) 1 + erf(pre / sqrt 2), which GELU and its derivative share
        Mat<S> logits;  // (N, H) W2 hidden + b2
        Mat<S> kept;    // (N, H) 1 for the top-k heads of each row, else 0
        Mat<S> weights; // (N, H) the routing weights
    };

    Params p;
    int channels = 0, heads = 0, topK = 0; // topK 0 (or >= heads): every head
    DroppedHeads dropped = DroppedHeads::Masked;

    // Linear(C -> C/2), GELU, Linear(C/2 -> H).
    void declare(ParamStore<S>& store, const std::string& prefix, int c, int h, int k, DroppedHeads mode);
    // Xavier-uniform weights, zero biases (every head equally likely at the start).
    template <typename InitRng> void init(ParamStore<S>& store, InitRng& rng) const;
    // weights (N, H) from x (N, C); kept in c.weights as well.
    void forward(ParamStore<S>& store, const Mat<S>& x, Cache& c) const;
    // Mean over the rows of the entropy -sum_h w log(w + 1e-8) of the weights.
    static S entropy(const Mat<S>& weights);
    // d entropy / d weights (N, H), for a loss term coef * entropy: added to dWeights scaled by coef.
    static void addEntropyGrad(const Mat<S>& weights, S coef, Mat<S>& dWeights);
    // The same over the real rows of a batch only (a padded batch's padding rows are left out).
    static S entropy(const Mat<S>& weights, const BatchShape& shape);
    static void addEntropyGrad(const Mat<S>& weights, const BatchShape& shape, S coef, Mat<S>& dWeights);
    // dx (N, C) is added to; parameter gradients accumulate.
    void backward(ParamStore<S>& store, const Mat<S>& x, const Cache& c, const Mat<S>& dWeights,
                  Mat<S>& dx) const;

    int kept() const { return topK <= 0 || topK >= heads ? heads : topK; }
};

// The output side of routed attention: routed = mixed with head h's D columns of row n scaled by
// weights(n, h), which then goes through Wo. The backward turns dRouted (in dMixed) into dMixed and
// dWeights(n, h) = sum over head h's columns of dRouted * mixed.
template <typename S> void scaleHeads(const Mat<S>& mixed, const Mat<S>& weights, Mat<S>& routed);
template <typename S>
void scaleHeadsBackward(const Mat<S>& mixed, const Mat<S>& weights, Mat<S>& dMixed, Mat<S>& dWeights);

// Attention's output projection, out = mixed Wo; with routing weights (N, H) the heads' outputs are
// scaled first and the scaled copy is kept in `routed` for the backward (emptied without routing).
template <typename S, typename W>
void projectHeads(const Mat<S>& mixed, const Mat<S>* weights, const W& wo, Mat<S>& routed, Mat<S>& out) {
    if (weights) {
        scaleHeads(mixed, *weights, routed);
        linearForward<S>(routed, wo, out);
    } else {
        routed.resize(0, 0);
        linearForward<S>(mixed, wo, out);
    }
}

// The backward of projectHeads: Wo's gradient (added to gradWo) and dMixed; with routing (a `routed`
// kept by the forward), dMixed through the scaling and the weights' gradient dWeights (N, H).
template <typename S, typename W, typename G>
void projectHeadsBackward(const Mat<S>& dOut, const Mat<S>& mixed, const Mat<S>& routed, const W& wo,
                          G&& gradWo, const Mat<S>* weights, Mat<S>& dMixed, Mat<S>* dWeights) {
    linearBackward<S>(dOut, routed.size() > 0 ? routed : mixed, wo, gradWo, &dMixed);
    if (routed.size() > 0)
        scaleHeadsBackward(mixed, *weights, dMixed, *dWeights);
}

} // namespace ndr

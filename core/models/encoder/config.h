// The encoder's configuration (docs/design.md §2): the switches that make every encoder row of the
// paper's Table 1 (NDR, the Transformer and its relative and gated variants), its sizes, dropouts, head
// routing, thought cost and halting.
#pragma once

#include "core/config/model_common.h"

namespace ndr {

enum class AttentionKind { Softmax, Geometric };
// CopyGateTanh: the gated relative layer's update, u = tanh(FFN(z)) where NDR has u = LN2(FFN(z)).
enum class UpdateKind { Residual, CopyGate, CopyGateTanh };
// Relative and AbsRel live inside softmax attention (Transformer-XL style scores); nothing is added to
// the embeddings. AbsRel gates, per query and head, between the relative and the absolute key position.
enum class PositionalKind { None, Sinusoidal, Relative, AbsRel };
enum class GeomNorm { Off, L1 };
// Head routing: how the heads left out by top-k are weighted (docs/design.md §2, "Head routing").
enum class DroppedHeads {
    Masked,    // weight exactly 0: the softmax runs over the kept heads only
    SeedExact, // the write-up's code: dropped logits multiplied by 0, so each keeps weight e^0 / Z
};

// Both copy-gated updates: h' = g * u + (1 - g) * h.
inline bool copyGated(UpdateKind u) {
    return u == UpdateKind::CopyGate || u == UpdateKind::CopyGateTanh;
}
inline bool relativePositions(PositionalKind p) {
    return p == PositionalKind::Relative || p == PositionalKind::AbsRel;
}

struct EncoderConfig {
    AttentionKind attention = AttentionKind::Geometric;
    UpdateKind update = UpdateKind::CopyGate;
    PositionalKind positional = PositionalKind::None;
    GeomNorm geomNorm = GeomNorm::Off;
    bool sharedWeights = true;
    int dModel = 128, heads = 4, dFF = 256;
    int steps = 14;                // unrolled steps (layers) in training
    int evalSteps = 0;             // steps at evaluation; 0 means the same as `steps`
    float dropout = 0.1f;          // attention output, FFN hidden, gate hidden, positional encoding
    float attentionDropout = 0.1f; // keys (geometric), keys and r(p) (relative), weights (softmax)
    float gateDropout = 0.1f;      // whole gate vector of a position set to 0 (copy) in training
    float gateBiasInit = -3.0f;    // bg2
    // Head routing (any attention): a gate network scales each head's output per token and step;
    // routeTopK heads are kept (0: all), routeEntropy weighs the entropy term of the loss.
    bool headRouting = false;
    int routeTopK = 0;
    DroppedHeads routeDropped = DroppedHeads::Masked;
    double routeEntropy = 0;
    // Thought cost (copy-gated updates): urgency * sum_t t * mean gate openness at step t, added to the
    // loss (docs/design.md §3). haltThreshold > 0: evaluation stops an example at the first step after
    // which every real position's haltOn signal (its mean gate, or the change the step made to it) is
    // below the threshold and reads the answer there.
    double thoughtCost = 0;
    double haltThreshold = 0;
    HaltSignal haltOn = HaltSignal::Gates;
    // The column the answer is read from (tasks with one answer per example).
    ReadoutColumn readout = ReadoutColumn::Last;

    int effectiveEvalSteps() const { return evalSteps > 0 ? evalSteps : steps; }
    bool gated() const { return copyGated(update); }
    bool operator==(const EncoderConfig&) const = default;
};

} // namespace ndr

// The Universal Transformer with adaptive computation time (docs/design.md §2, "UT + ACT"): one shared
// softmax layer unrolled for at most `steps` steps, a halting unit per position, and the answer read
// from each position's states weighted by its halting distribution.
#pragma once

#include "core/config/model_common.h"
#include "core/models/encoder/config.h"

namespace ndr {

struct ActConfig {
    PositionalKind positional = PositionalKind::Sinusoidal; // sinusoidal or relative (inside attention)
    int dModel = 128, heads = 4, dFF = 256;
    int steps = 14;                // at most this many steps in training
    int evalSteps = 0;             // at most this many at evaluation; 0 means the same as `steps`
    float dropout = 0.1f;          // attention output, FFN hidden and output, positional encoding
    float attentionDropout = 0.0f; // attention weights (keys and r(p) with relative positions)
    // A position halts at the first step its cumulative halting probability would pass haltAt
    // (1 - epsilon); the last step halts every position still running.
    double haltAt = 0.99;
    // tau: the loss adds tau * the mean over real positions of the remainder R (the part of the ponder
    // cost N + R that carries a gradient).
    double ponderCost = 0.03;
    ReadoutColumn readout = ReadoutColumn::Last;

    int effectiveEvalSteps() const { return evalSteps > 0 ? evalSteps : steps; }
    // The shared layer as an encoder layer: softmax attention, the post-LN residual update.
    EncoderConfig layer() const {
        EncoderConfig e;
        e.attention = AttentionKind::Softmax;
        e.update = UpdateKind::Residual;
        e.positional = positional;
        e.sharedWeights = true;
        e.dModel = dModel, e.heads = heads, e.dFF = dFF, e.steps = steps, e.evalSteps = evalSteps;
        e.dropout = dropout;
        e.attentionDropout = attentionDropout;
        e.gateDropout = 0;
        e.readout = readout;
        return e;
    }
    bool operator==(const ActConfig&) const = default;
};

} // namespace ndr

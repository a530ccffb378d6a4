// ThoughtNet's configuration (docs/design.md §2): its state, its K learned operators and their
// attention, the positions concatenated to the state, its iterations, thought cost and halting.
#pragma once

#include "core/config/model_common.h"

namespace ndr {

struct ThoughtNetConfig {
    int stateSize = 64;    // each token's state
    int heads = 4;         // the operators' attention heads
    int hiddenSize = 64;   // the operators' and the selector's hidden width
    int operators = 4;     // K learned operators beside the zero operator
    int positionDims = 16; // width of the sinusoidal positions concatenated to the state
    int steps = 10;        // iterations in training
    int evalSteps = 0;     // at evaluation; 0: the same
    // Urgency * sum_i i * the learned operators' selection weight (docs/design.md §3), and the
    // evaluation's halting: once that weight (or the change, with haltOn) is below the threshold.
    double thoughtCost = 2e-4;
    double haltThreshold = 0.2;
    HaltSignal haltOn = HaltSignal::Gates;

    int effectiveEvalSteps() const { return evalSteps > 0 ? evalSteps : steps; }
    bool operator==(const ThoughtNetConfig&) const = default;
};

} // namespace ndr

// ThoughtNet as a model kind (core/models/kinds.h).
#pragma once

#include "core/models/thoughtnet/config.h"

#include <memory>

namespace ndr {

struct ModelConfig;
struct ModelKindInfo;
template <typename S> class Model;

struct ThoughtNetKind {
    using Config = ThoughtNetConfig;
    static const ModelKindInfo& info();
    template <typename S>
    static std::unique_ptr<Model<S>> make(const ModelConfig& config, int vocab, int symbols);
};

// ThoughtNet (docs/design.md §2) with its state width, heads, hidden width, K operators and at most
// `steps` iterations: urgency 2e-4 and fixed-point threshold 0.2 as in its write-up, no dropout.
ModelConfig thoughtNetModel(int stateSize, int heads, int hiddenSize, int operators, int steps);

} // namespace ndr

// The Universal Transformer with ACT as a model kind (core/models/kinds.h).
#pragma once

#include "core/models/act/config.h"

#include <memory>

namespace ndr {

struct ModelConfig;
struct ModelKindInfo;
template <typename S> class Model;

struct ActKind {
    using Config = ActConfig;
    static const ModelKindInfo& info();
    template <typename S>
    static std::unique_ptr<Model<S>> make(const ModelConfig& config, int vocab, int symbols);
};

// The Universal Transformer with ACT at the given sizes and at most `steps` steps: the authors' ACT
// encoder (halting at 0.99, ponder cost 0.03 on the remainders) over the Transformer's layer.
ModelConfig actModel(int dModel, int heads, int dFF, int steps);

} // namespace ndr

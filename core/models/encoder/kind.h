// The encoder as a model kind (core/models/kinds.h).
#pragma once

#include "core/models/encoder/config.h"

#include <memory>
#include <string>
#include <vector>

namespace ndr {

struct ModelConfig;
struct ModelKindInfo;
template <typename S> class Model;

struct EncoderKind {
    using Config = EncoderConfig;
    static const ModelKindInfo& info();
    template <typename S>
    static std::unique_ptr<Model<S>> make(const ModelConfig& config, int vocab, int symbols);
};

// The built-in encoders "ndr" and "vanilla" (the Transformer) with the given sizes.
ModelConfig ndrModel(int dModel, int heads, int dFF, int steps);
ModelConfig vanillaModel(int dModel, int heads, int dFF, int steps);

// The encoder rows of the paper's Table 1 as switches, with the given sizes (docs/design.md §2):
// "transformer" (= vanillaModel), "rel", "rel-gate", "absrel-gate", "geom", "ndr" (= ndrModel). The
// gated rows start from ndrModel, the others from vanillaModel, and change only the switches and the
// name. Throws std::invalid_argument on an unknown row, listing the known ones.
std::vector<std::string> tableOneRows();
ModelConfig tableOneModel(const std::string& row, int dModel, int heads, int dFF, int steps);
// The model preset whose switches `m` has ("" when none): "ndr", "rel", ..., "lstm", "thoughtnet".
std::string tableOneRowOf(const ModelConfig& m);

} // namespace ndr

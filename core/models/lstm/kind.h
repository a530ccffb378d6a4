// The LSTM as a model kind (core/models/kinds.h).
#pragma once

#include "core/models/lstm/config.h"

#include <memory>

namespace ndr {

struct ModelConfig;
struct ModelKindInfo;
template <typename S> class Model;

struct LstmKind {
    using Config = LstmConfig;
    static const ModelKindInfo& info();
    template <typename S>
    static std::unique_ptr<Model<S>> make(const ModelConfig& config, int vocab, int symbols);
};

// The LSTM baseline of the paper's Table 1: Adam (weight decay 0) at lr 1e-3, dropout 0.5 on the embeddings.
ModelConfig lstmModel(int hidden = 200, int embedding = 16);

} // namespace ndr

// The model of a configuration's kind (see model.h), through the registry (core/models/kinds.h).
#include "core/config/config.h"
#include "core/nn/model.h"
#include "core/nn/scalars.h"

namespace ndr {

template <typename S>
std::unique_ptr<Model<S>> makeModel(const ModelConfig& config, int vocabSize, int symbols) {
    return ModelKinds::make<S>(config.kind.index(), config, vocabSize, symbols);
}

#define NDR_INSTANTIATE(S) template std::unique_ptr<Model<S>> makeModel<S>(const ModelConfig&, int, int);
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr

// The model of a configuration's kind (see model.h).
#include "core/nn/model.h"
#include "core/nn/scalars.h"

#include "core/models/encoder/encoder.h"
#include "core/models/lstm/lstm.h"
#include "core/models/thoughtnet/thoughtnet.h"

namespace ndr {

template <typename S>
std::unique_ptr<Model<S>> makeModel(const ModelConfig& config, int vocabSize, int symbols) {
    if (config.kind == ModelKind::Lstm)
        return std::make_unique<Lstm<S>>(config, vocabSize, symbols);
    if (config.kind == ModelKind::ThoughtNet)
        return std::make_unique<ThoughtNet<S>>(config, vocabSize, symbols);
    return std::make_unique<Encoder<S>>(config, vocabSize, symbols);
}

#define NDR_INSTANTIATE(S) template std::unique_ptr<Model<S>> makeModel<S>(const ModelConfig&, int, int);
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr

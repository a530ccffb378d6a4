// A list of model kinds (core/models/kinds.h): the variant of their configurations, their descriptions
// and the factory of their models, from each kind's struct:
//     struct SomeKind {
//         using Config = SomeConfig;                                  // its configuration
//         static const ModelKindInfo& info();                         // its description (base library)
//         template <typename S> static std::unique_ptr<Model<S>> make(const ModelConfig&, int vocab,
//                                                                     int symbols); // the engine's
//     };
#pragma once

#include <cstddef>
#include <memory>
#include <variant>
#include <vector>

namespace ndr {

struct ModelConfig;
struct ModelKindInfo;
template <typename S> class Model;

template <typename... Kinds> struct KindList {
    using Config = std::variant<typename Kinds::Config...>;

    // The descriptions, in the order of Config's alternatives.
    static const std::vector<const ModelKindInfo*>& infos() {
        static const std::vector<const ModelKindInfo*> all = {&Kinds::info()...};
        return all;
    }

    // The model of the kind at `index` (Config's alternative).
    template <typename S>
    static std::unique_ptr<Model<S>> make(size_t index, const ModelConfig& config, int vocab, int symbols) {
        std::unique_ptr<Model<S>> out;
        size_t i = 0;
        ((i++ == index ? void(out = Kinds::template make<S>(config, vocab, symbols)) : void()), ...);
        return out;
    }
};

} // namespace ndr

// The LSTM's description as a model kind (core/config/model_kind.h).
#include "core/models/lstm/kind.h"

#include "core/config/model_kind.h"
#include "core/task/task.h"

namespace ndr {

namespace {

using C = LstmConfig;

std::vector<ModelField> fields() {
    return {modelField(intField<C>("lstmHidden", "hidden", "Width of the LSTM's state and cell (H).",
                                   &C::hidden, 1, 4096)),
            modelField(intField<C>("lstmEmbedding", "embedding", "Width of the LSTM's token embeddings.",
                                   &C::embedding, 1, 4096)),
            modelField(realField<C>("dropout", "dropout", "Dropout on the token embeddings.", &C::dropout, 0,
                                    1, 0.05, FieldRange::BelowMax))};
}

void validateLstm(const ModelConfig&, const TaskConfig& task, const std::string& at, Problems& p) {
    if (answersPerExample(task) > 1)
        p.add(at + ".kind", "the LSTM reads one answer after the last token; multi-digit arithmetic needs an "
                            "answer digit at every position: use an encoder or ThoughtNet");
}

ModelFacts facts(const ModelConfig&) {
    ModelFacts f;
    f.stepped = false; // it reads its tokens one by one: no step to count, halt after or route
    return f;
}

// Per token: the input and recurrent maps (4H, E) and (4H, H), each with its forward, input gradient
// and weight gradient over the batch; then the readout on the last token.
std::vector<ProductShape> stepProducts(const ModelConfig& m, long long rows, int symbols, int batch,
                                       int /*readouts*/) {
    const C& c = m.as<C>();
    const long long H = c.hidden, E = c.embedding, B = batch, T = batch > 0 ? rows / batch : 0;
    std::vector<ProductShape> g;
    for (long long t = 0; t < T; ++t)
        for (const auto& [out, in] : {std::pair<long long, long long>{4 * H, E}, {4 * H, H}}) {
            addLinearMapProducts(g, B, out, in);
        }
    g.push_back({B, symbols, H});
    return g;
}

} // namespace

ModelConfig lstmModel(int hidden, int embedding) {
    ModelConfig m;
    m.name = "LSTM";
    C c;
    c.hidden = hidden;
    c.embedding = embedding;
    c.dropout = 0.5f; // on the embeddings
    m.kind = c;
    // The paper trains its LSTM with plain Adam: AdamW without weight decay, at its own rate whatever the
    // run's rate is.
    m.learningRate = 1e-3;
    m.weightDecay = 0;
    return m;
}

const ModelKindInfo& LstmKind::info() {
    static const ModelKindInfo k = [] {
        ModelKindInfo i;
        i.id = "lstm";
        i.label = "LSTM";
        i.help =
            "the paper's recurrent baseline, one LSTM layer over the tokens without [B] and [E]. The paper "
            "trains it with Adam at lr 1e-3, no weight decay and dropout 0.5 on the embeddings (the "
            "\"lstm\" model preset).";
        i.fields = fields();
        i.defaults = [] { return lstmModel(); };
        i.validate = &validateLstm;
        i.facts = facts;
        i.setHalting = [](ModelConfig&, double, HaltSignal) {};
        i.parameterFields = {"lstmHidden", "lstmEmbedding"};
        i.stepProducts = stepProducts;
        ModelPreset preset;
        preset.id = "lstm";
        preset.label = "LSTM";
        preset.make = [](const std::vector<ModelConfig>&) { return lstmModel(); };
        preset.apply = [make = preset.make](ModelConfig& m) { m = make({m}); };
        preset.matches = [](const ModelConfig& m) { return m.is<C>(); };
        i.presets = {preset};
        return i;
    }();
    return k;
}

} // namespace ndr

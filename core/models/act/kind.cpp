// The Universal Transformer with ACT as a model kind (core/config/model_kind.h): its fields, rules,
// facts, preset, run preset and product shapes.
#include "core/models/act/kind.h"

#include "core/config/model_kind.h"
#include "core/task/task.h"

namespace ndr {

namespace {

using C = ActConfig;

// Keys shared with the encoder where the meaning is the same, so the panel shows them on one row.
FieldTable<C> fields() {
    FieldTable<C> t;
    t.push_back(choiceField<C>(
        "positional", "positional",
        "sinusoidal: sinusoidal encoding added to the embeddings (the authors' ACT Transformer).\n"
        "relative: the offset key - query inside softmax attention's scores.",
        &C::positional,
        {{PositionalKind::Sinusoidal, "sinusoidal", "sinusoidal"},
         {PositionalKind::Relative, "relative", "relative"}}));
    t.push_back(choiceField<C>(
        "readout", "readout", "The column the answer is read from: [E] at the end, or [B] at the start.",
        &C::readout,
        {{ReadoutColumn::Last, "last", "[E] (last)"}, {ReadoutColumn::First, "first", "[B] (first)"}}));
    t.push_back(intField<C>("dModel", "d_model",
                            "Width of each column's state (d_model); heads must divide it.", &C::dModel, 1,
                            4096));
    t.push_back(
        headsField<C>("Attention heads H; each head has d_model / H channels.", &C::heads, &C::dModel));
    t.push_back(
        intField<C>("dFF", "d_ff", "Hidden width of the feed-forward block (d_ff).", &C::dFF, 1, 16384));
    t.push_back(intField<C>("steps", "steps",
                            "At most this many steps in training: a position halts earlier once its "
                            "cumulative halting probability passes 'halt at', the last step halts the rest.",
                            &C::steps, 1, 64));
    auto evalSteps = intField<C>("evalSteps", "eval steps",
                                 "At most this many steps at evaluation; 'same' uses the training steps.",
                                 &C::evalSteps, 0, 128, "same");
    evalSteps.range = FieldRange::Custom;
    evalSteps.check = [](const C& c) {
        return c.evalSteps != 0 && (c.evalSteps < c.steps || c.evalSteps > 128)
                   ? "must be 0 (same as steps) or between steps (" + std::to_string(c.steps) +
                         ") and 128, got " + std::to_string(c.evalSteps)
                   : std::string();
    };
    t.push_back(evalSteps);
    t.push_back(realField<C>("dropout", "dropout",
                             "Dropout on the attention output, the feed-forward layers and the positional "
                             "encoding.",
                             &C::dropout, 0, 1, 0.05, FieldRange::BelowMax));
    t.push_back(realField<C>("attentionDropout", "att. dropout", "Dropout on the attention weights.",
                             &C::attentionDropout, 0, 1, 0.05, FieldRange::BelowMax));
    auto haltAt = realField<C>("haltAt", "halt at",
                               "1 - epsilon: a position halts at the first step its cumulative halting "
                               "probability would pass this, and gives that step the remainder.",
                               &C::haltAt, 0.5, 0.999, 0.01, FieldRange::Custom);
    haltAt.check = [](const C& c) {
        return c.haltAt > 0 && c.haltAt < 1 ? std::string()
                                            : "must be in (0, 1), got " + numberText(c.haltAt);
    };
    t.push_back(haltAt);
    t.push_back(realField<C>("ponderCost", "ponder cost",
                             "tau: the loss adds tau * the mean over positions of the remainder R, the "
                             "part of the ponder cost N + R that has a gradient; larger halts sooner.",
                             &C::ponderCost, 0, 10, 0.005));
    return t;
}

void validateAct(const ModelConfig& m, const TaskConfig& task, const std::string& at, Problems& p) {
    if (m.as<C>().readout == ReadoutColumn::First && answersPerExample(task) > 1)
        p.add(at + ".readout",
              "multi-digit arithmetic reads answer digit k at position k; 'first' is for tasks "
              "with one answer per example: set it to last");
}

ModelFacts facts(const ModelConfig& m) {
    const C& c = m.as<C>();
    ModelFacts f;
    f.stepped = true;
    f.steps = c.steps;
    f.evalSteps = c.effectiveEvalSteps();
    f.sharedSteps = true;
    f.gates = true;
    f.gateName = "halting weight";
    f.heads = c.heads;
    f.learnedHalting = "ACT at " + numberText(c.haltAt);
    f.readout = c.readout;
    f.readoutChoice = true;
    return f;
}

// As the encoder's softmax layer (Q, K, V; output; the FFN's two layers) and the halting unit, per
// step: forward, input gradient and weight gradient.
std::vector<ProductShape> stepProducts(const ModelConfig& m, long long rows, int symbols, int batch,
                                       int readouts) {
    const C& c = m.as<C>();
    const long long D = c.dModel, F = c.dFF;
    const std::pair<long long, long long> maps[] = {{3 * D, D}, {D, D}, {F, D}, {D, F}, {1, D}};
    std::vector<ProductShape> g;
    for (int s = 0; s < c.steps; ++s)
        for (const auto& [out, in] : maps) {
            addLinearMapProducts(g, rows, out, in);
        }
    g.push_back({(long long)batch * readouts, symbols, D});
    return g;
}

ModelPreset preset() {
    ModelPreset p;
    p.id = "ut-act";
    p.label = "UT + ACT";
    // Sized like the run preset's Transformer (its second model), as the authors size their ACT runs.
    p.make = [](const std::vector<ModelConfig>& models) {
        const ModelConfig& sized = models.at(models.size() > 1 ? 1 : 0);
        return actModel(int(intFieldOf(sized, "dModel", 128)), int(intFieldOf(sized, "heads", 4)),
                        int(intFieldOf(sized, "dFF", 256)), 14);
    };
    p.apply = [make = p.make](ModelConfig& m) {
        if (!m.is<C>())
            m = make({m});
    };
    p.matches = [](const ModelConfig& m) { return m.is<C>(); };
    return p;
}

// CTL forward (paper-forward's task, schedule and NDR) with the Universal Transformer with ACT beside
// the NDR: the classic halting baseline against the copy gate.
RunConfig actForwardPreset() {
    RunConfig c = presetConfig("paper-forward");
    c.preset = "ut-act";
    ModelConfig act = actModel(128, 4, 256, 14);
    act.learningRate = 1e-3;
    c.models = {c.models[0], act};
    return c;
}

} // namespace

ModelConfig actModel(int dModel, int heads, int dFF, int steps) {
    ModelConfig m;
    m.name = "UT + ACT";
    C c;
    c.dModel = dModel, c.heads = heads, c.dFF = dFF, c.steps = steps;
    m.kind = c;
    return m;
}

const ModelKindInfo& ActKind::info() {
    static const ModelKindInfo k = [] {
        ModelKindInfo i;
        i.id = "ut-act";
        i.label = "UT + ACT";
        i.help = "the Universal Transformer with adaptive computation time: one shared softmax layer, each "
                 "position halting when its cumulative halting probability passes 1 - epsilon.";
        i.fields = modelFields(fields());
        i.defaults = [] { return actModel(128, 4, 256, 14); };
        i.validate = &validateAct;
        i.facts = facts;
        i.setHalting = [](ModelConfig&, double, HaltSignal) {}; // its halting is learned
        i.parameterFields = {"positional", "dModel", "heads", "dFF"};
        i.stepProducts = stepProducts;
        i.presets = {preset()};
        i.runPresets = {{"ut-act", actForwardPreset}};
        return i;
    }();
    return k;
}

} // namespace ndr

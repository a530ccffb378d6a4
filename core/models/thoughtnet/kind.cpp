// ThoughtNet's description as a model kind (core/config/model_kind.h).
#include "core/models/thoughtnet/kind.h"

#include "core/config/model_kind.h"

namespace ndr {

namespace {

using C = ThoughtNetConfig;

// The keys are the encoder's where the meaning is near (the state's width, heads, hidden width, steps,
// thought cost, halting), so the panel shows them on one row.
std::vector<ModelField> fields() {
    std::vector<ModelField> f;
    f.push_back(modelField(
        intField<C>("dModel", "state size", "Width of each token's state.", &C::stateSize, 1, 4096)));
    f.push_back(modelField(
        headsField<C>("Attention heads of each operator's self-attention.", &C::heads, &C::stateSize)));
    f.push_back(
        modelField(intField<C>("dFF", "hidden", "Hidden width of the operators' and the selector's layers.",
                               &C::hiddenSize, 1, 16384)));
    f.push_back(modelField(intField<C>("steps", "steps", "Iterations in training.", &C::steps, 1, 64)));
    auto evalSteps =
        intField<C>("evalSteps", "eval steps", "Iterations at evaluation; 'same' uses the training steps.",
                    &C::evalSteps, 0, 128, "same");
    evalSteps.range = FieldRange::Custom;
    evalSteps.check = [](const C& c) {
        return c.evalSteps != 0 && (c.evalSteps < c.steps || c.evalSteps > 128)
                   ? "must be 0 (same as steps) or between steps (" + std::to_string(c.steps) +
                         ") and 128, got " + std::to_string(c.evalSteps)
                   : std::string();
    };
    f.push_back(modelField(evalSteps));
    f.push_back(modelField(intField<C>(
        "operators", "operators",
        "Learned operators K beside the zero operator; the selector mixes the K + 1 per token and step.",
        &C::operators, 1, 16)));
    auto positions = intField<C>("positionDims", "positions",
                                 "Width of the sinusoidal positions concatenated to the state (even).",
                                 &C::positionDims, 0, 256);
    positions.range = FieldRange::Custom;
    positions.check = [](const C& c) {
        if (c.positionDims < 0 || c.positionDims > 256)
            return "must be between 0 and 256, got " + std::to_string(c.positionDims);
        if (c.positionDims % 2 != 0)
            return "must be even (sine and cosine pairs), got " + std::to_string(c.positionDims);
        return std::string();
    };
    f.push_back(modelField(positions));
    f.push_back(
        modelField(realField<C>("thoughtCost", "thought cost",
                                "Urgency u: the loss adds u * sum over steps t of t * the learned operators' "
                                "selection weight, so later steps cost more.",
                                &C::thoughtCost, 0, 10, 0.005)));
    auto halt =
        realField<C>("haltThreshold", "halt below",
                     "At evaluation an example stops once every token's signal (see halt on) is below "
                     "this. 'off' runs every step.",
                     &C::haltThreshold, 0, 0.99, 0.01, FieldRange::Custom, "off");
    halt.check = [](const C& c) {
        return c.haltThreshold < 0 || c.haltThreshold >= 1
                   ? "must be 0 (no halting) or in (0, 1), got " + numberText(c.haltThreshold)
                   : std::string();
    };
    f.push_back(modelField(halt));
    f.push_back(modelField(choiceField<C>(
        "haltOn", "halt on",
        "gates: the learned operators' total weight. change: how far the step moved "
        "each token's state.",
        &C::haltOn, {{HaltSignal::Gates, "gates", "gates"}, {HaltSignal::Change, "change", "change"}})));
    return f;
}

ModelFacts facts(const ModelConfig& m) {
    const C& c = m.as<C>();
    ModelFacts f;
    f.stepped = true;
    f.steps = c.steps;
    f.evalSteps = c.effectiveEvalSteps();
    f.gates = true;
    f.gateName = "learned operators' weight";
    f.heads = c.heads;
    f.thoughtCost = c.thoughtCost;
    f.haltThreshold = c.haltThreshold;
    f.haltOn = c.haltOn;
    f.halts[int(HaltSignal::Gates)] = true;
    f.halts[int(HaltSignal::Change)] = true;
    return f;
}

// Each operator: input map, attention's Q, K, V and output maps, dense, output, state path; then the
// selector's two layers (thoughtnet.h); per step, forward, input and weight gradients.
std::vector<ProductShape> stepProducts(const ModelConfig& m, long long rows, int symbols, int batch,
                                       int readouts) {
    const C& c = m.as<C>();
    const long long D = c.stateSize, F = c.hiddenSize, P = c.positionDims;
    std::vector<std::pair<long long, long long>> maps;
    for (int k = 0; k < c.operators; ++k)
        for (auto map :
             {std::pair<long long, long long>{D, D + P}, {3 * D, D}, {D, D}, {F, D}, {D, F}, {D, D}})
            maps.push_back(map);
    maps.push_back({F, D + P});
    maps.push_back({c.operators + 1, F});
    std::vector<ProductShape> g;
    for (int s = 0; s < c.steps; ++s)
        for (const auto& [out, in] : maps) {
            addLinearMapProducts(g, rows, out, in);
        }
    g.push_back({(long long)batch * readouts, symbols, D});
    return g;
}

} // namespace

ModelConfig thoughtNetModel(int stateSize, int heads, int hiddenSize, int operators, int steps) {
    ModelConfig m;
    m.name = "ThoughtNet";
    C c;
    c.stateSize = stateSize, c.heads = heads, c.hiddenSize = hiddenSize, c.steps = steps;
    c.operators = operators;
    c.positionDims = 16;
    c.thoughtCost = 2e-4;
    c.haltThreshold = 0.2;
    m.kind = c;
    return m;
}

const ModelKindInfo& ThoughtNetKind::info() {
    static const ModelKindInfo k = [] {
        ModelKindInfo i;
        i.id = "thoughtnet";
        i.label = "ThoughtNet";
        i.help =
            "learned operators mixed per token by a selector with a zero (identity) operator, iterated until "
            "a fixed point (the \"thoughtnet\" model preset).";
        i.fields = fields();
        i.defaults = [] { return thoughtNetModel(64, 4, 64, 4, 10); };
        i.validate = [](const ModelConfig&, const TaskConfig&, const std::string&, Problems&) {};
        i.facts = facts;
        i.setHalting = [](ModelConfig& m, double threshold, HaltSignal on) {
            m.as<C>().haltThreshold = threshold;
            m.as<C>().haltOn = on;
        };
        i.parameterFields = {"dModel", "heads", "dFF", "operators", "positionDims"};
        i.stepProducts = stepProducts;
        ModelPreset preset;
        preset.id = "thoughtnet";
        preset.label = "ThoughtNet";
        // Sized like the run preset's first model.
        preset.make = [](const std::vector<ModelConfig>& models) {
            const ModelConfig& sized = models.at(0);
            return thoughtNetModel(int(intFieldOf(sized, "dModel", 64)), int(intFieldOf(sized, "heads", 4)),
                                   int(intFieldOf(sized, "dFF", 64)), 4, int(intFieldOf(sized, "steps", 10)));
        };
        preset.apply = [make = preset.make](ModelConfig& m) { m = make({m}); };
        preset.matches = [](const ModelConfig& m) { return m.is<C>(); };
        i.presets = {preset};
        return i;
    }();
    return k;
}

} // namespace ndr

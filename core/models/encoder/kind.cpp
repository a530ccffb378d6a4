// The encoder's description as a model kind (core/config/model_kind.h): its fields, rules, facts, the
// Table 1 rows as its presets, its product shapes and its checkpoint rule.
#include "core/models/encoder/kind.h"

#include "core/config/model_kind.h"
#include "core/task/task.h"

#include <stdexcept>

namespace ndr {

namespace {

using C = EncoderConfig;

const C& enc(const ModelConfig& m) {
    return m.as<C>();
}

// One row of the paper's Table 1: the switches that make it (docs/design.md §4).
struct TableOneRow {
    const char* row;   // the name config files and the panel use
    const char* label; // the model's name, as the paper's table writes the row
    AttentionKind attention;
    UpdateKind update;
    PositionalKind positional;
};

constexpr TableOneRow kTableOne[] = {
    {"transformer", "Transformer", AttentionKind::Softmax, UpdateKind::Residual, PositionalKind::Sinusoidal},
    {"rel", "+rel", AttentionKind::Softmax, UpdateKind::Residual, PositionalKind::Relative},
    {"rel-gate", "+rel+gate", AttentionKind::Softmax, UpdateKind::CopyGateTanh, PositionalKind::Relative},
    {"absrel-gate", "+abs/rel+gate", AttentionKind::Softmax, UpdateKind::CopyGateTanh,
     PositionalKind::AbsRel},
    {"geom", "+geom", AttentionKind::Geometric, UpdateKind::Residual, PositionalKind::None},
    {"ndr", "NDR", AttentionKind::Geometric, UpdateKind::CopyGate, PositionalKind::None},
};

// The fields both built-in encoders share; EncoderConfig's defaults are the NDR switches.
ModelConfig sizedModel(const char* name, int dModel, int heads, int dFF, int steps) {
    ModelConfig m;
    m.name = name;
    C c;
    c.dModel = dModel, c.heads = heads, c.dFF = dFF, c.steps = steps;
    c.evalSteps = 0;
    c.sharedWeights = true;
    c.geomNorm = GeomNorm::Off;
    c.dropout = 0.1f;
    c.attentionDropout = 0.1f;
    c.gateBiasInit = -3.0f;
    m.kind = c;
    return m;
}

FieldTable<C> fields() {
    FieldTable<C> t;
    auto attention = choiceField<C>(
        "attention", "attention",
        "softmax: scaled dot-product attention (vanilla Transformer); with relative or abs/rel positions, "
        "Transformer-XL style relative attention.\ngeometric: NDR's geometric attention with directional "
        "encoding: a column attends to the closest matching column, preferring left or right.",
        &C::attention,
        {{AttentionKind::Softmax, "softmax", "softmax"},
         {AttentionKind::Geometric, "geometric", "geometric"}});
    t.push_back(attention);
    auto norm =
        choiceField<C>("geomNorm", "geom. norm",
                       "Normalisation of geometric attention. off: each row of weights sums to at most "
                       "1 (the paper's NDR); L1: rows rescaled to sum to 1. Geometric attention only.",
                       &C::geomNorm, {{GeomNorm::Off, "off", "off"}, {GeomNorm::L1, "l1", "L1"}});
    // Stays editable while it holds L1 under softmax: validation flags that, and the user must fix it.
    norm.applies = [](const C& c) {
        return c.attention == AttentionKind::Geometric || c.geomNorm == GeomNorm::L1;
    };
    t.push_back(norm);
    t.push_back(choiceField<C>(
        "update", "update",
        "copy gate: h' = g*u + (1-g)*h with u = LN(FFN), a column changes only where its gate opens (NDR).\n"
        "copy gate, tanh: the same with u = tanh(FFN) (the gated relative layer, +rel+gate).\n"
        "residual: post-LN residual layer (vanilla Transformer).",
        &C::update,
        {{UpdateKind::Residual, "residual", "residual"},
         {UpdateKind::CopyGate, "copy-gate", "copy gate"},
         {UpdateKind::CopyGateTanh, "copy-gate-tanh", "copy gate, tanh"}}));
    t.push_back(choiceField<C>(
        "positional", "positional",
        "none: no absolute positions; geometric attention's direction is enough (NDR).\n"
        "sinusoidal: sinusoidal encoding added to the embeddings (vanilla Transformer).\n"
        "relative: the offset key - query inside softmax attention's scores (+rel).\n"
        "abs/rel: relative, mixed per query and head with the absolute key position (+abs/rel).\n"
        "relative and abs/rel need softmax attention.",
        &C::positional,
        {{PositionalKind::None, "none", "none"},
         {PositionalKind::Sinusoidal, "sinusoidal", "sinusoidal"},
         {PositionalKind::Relative, "relative", "relative"},
         {PositionalKind::AbsRel, "abs-rel", "abs/rel"}}));
    t.push_back(boolField<C>("sharedWeights", "shared",
                             "One layer unrolled for every step (weights shared across steps). Needed to run "
                             "more steps at evaluation than in training.",
                             &C::sharedWeights));
    t.push_back(choiceField<C>(
        "readout", "readout",
        "The column the answer is read from after the last step: [E] at the end (the paper's table lookup "
        "and "
        "arithmetic NDR), or [B] at the start (the authors' ListOps models, where the outermost operation "
        "comes first).",
        &C::readout,
        {{ReadoutColumn::Last, "last", "[E] (last)"}, {ReadoutColumn::First, "first", "[B] (first)"}}));
    t.push_back(intField<C>("dModel", "d_model",
                            "Width of each column's state (d_model); heads must divide it.", &C::dModel, 1,
                            4096));
    t.push_back(
        headsField<C>("Attention heads H; each head has d_model / H channels.", &C::heads, &C::dModel));
    t.push_back(
        intField<C>("dFF", "d_ff", "Hidden width of the feed-forward block (d_ff).", &C::dFF, 1, 16384));
    t.push_back(
        intField<C>("steps", "steps",
                    "Layer applications (unrolled steps) in training. An example of depth d needs about "
                    "d + 1 steps to route its answer to the column it is read from.",
                    &C::steps, 1, 64));
    auto evalSteps =
        intField<C>("evalSteps", "eval steps",
                    "Steps at evaluation; 'same' uses the training steps. With shared weights a model "
                    "can run more steps on the longer test inputs.",
                    &C::evalSteps, 0, 128, "same");
    evalSteps.range = FieldRange::Custom;
    evalSteps.check = [](const C& c) {
        if (c.evalSteps == 0)
            return std::string();
        if (!c.sharedWeights && c.evalSteps != c.steps)
            return "must be 0 or equal to steps (" + std::to_string(c.steps) +
                   ") without shared weights: separate layers cannot be unrolled further, got " +
                   std::to_string(c.evalSteps);
        if (c.evalSteps < c.steps || c.evalSteps > 128)
            return "must be 0 (same as steps) or between steps (" + std::to_string(c.steps) +
                   ") and 128, got " + std::to_string(c.evalSteps);
        return std::string();
    };
    t.push_back(evalSteps);
    t.push_back(
        realField<C>("dropout", "dropout",
                     "Dropout on the attention output, the feed-forward hidden layer, the gate's hidden "
                     "layer and the positional encoding.",
                     &C::dropout, 0, 1, 0.05, FieldRange::BelowMax));
    t.push_back(
        realField<C>("attentionDropout", "att. dropout",
                     "Attention dropout: on the keys for geometric attention, on the keys and position "
                     "vectors for relative attention, on the attention weights for softmax.",
                     &C::attentionDropout, 0, 1, 0.05, FieldRange::BelowMax));
    auto gateDropout =
        realField<C>("gateDropout", "gate dropout",
                     "Gate dropout: probability of forcing a column's gate to copy (g = 0) during "
                     "training. Copy-gate updates only.",
                     &C::gateDropout, 0, 1, 0.05, FieldRange::BelowMax);
    gateDropout.applies = [](const C& c) { return c.gated(); };
    t.push_back(gateDropout);
    auto gateBias =
        realField<C>("gateBiasInit", "gate bias",
                     "Initial bias of the gate's output layer (b_g2). -3 starts the gates almost closed, "
                     "so layers begin as copies. Copy-gate updates only.",
                     &C::gateBiasInit, -20, 20, 0.5, FieldRange::Custom);
    gateBias.check = [](const C&) { return std::string(); }; // any finite value
    gateBias.applies = [](const C& c) { return c.gated(); };
    t.push_back(gateBias);
    t.push_back(
        boolField<C>("headRouting", "head routing",
                     "A gate network (Linear d -> d/2, GELU, Linear d/2 -> H) gives each token at each step "
                     "a weight per attention head; each head's output is scaled by its weight before the "
                     "output projection. Active in training and evaluation.",
                     &C::headRouting));
    auto topK =
        intField<C>("routeTopK", "top-k heads",
                    "How many heads each token keeps (the largest gate logits); the softmax runs over "
                    "those. 'all' keeps every head.",
                    &C::routeTopK, 0, 64, "all");
    topK.range = FieldRange::Custom;
    topK.check = [](const C& c) {
        return c.headRouting && (c.routeTopK < 0 || (c.heads >= 1 && c.routeTopK > c.heads))
                   ? "must be 0 (every head) or between 1 and heads (" + std::to_string(c.heads) + "), got " +
                         std::to_string(c.routeTopK)
                   : std::string();
    };
    // As geom. norm: a value the switches make invalid stays editable.
    topK.applies = [](const C& c) { return c.headRouting || c.routeTopK != 0; };
    t.push_back(topK);
    auto dropped = choiceField<C>(
        "routeDropped", "dropped heads",
        "masked: heads outside the top k get weight exactly 0.\nseed-exact: as the "
        "head-routing write-up's code, which multiplies their logits by 0, so each keeps "
        "weight e^0 / Z.",
        &C::routeDropped,
        {{DroppedHeads::Masked, "masked", "masked"}, {DroppedHeads::SeedExact, "seed-exact", "seed-exact"}});
    dropped.applies = [](const C& c) {
        return (c.headRouting && c.routeTopK > 0) || c.routeDropped != DroppedHeads::Masked;
    };
    t.push_back(dropped);
    auto entropy =
        realField<C>("routeEntropy", "routing entropy",
                     "Coefficient of the mean routing entropy added to the loss; positive rewards peaky, "
                     "specialised routing (the write-up uses 0.01).",
                     &C::routeEntropy, -10, 10, 0.005);
    entropy.applies = [](const C& c) { return c.headRouting || c.routeEntropy != 0; };
    t.push_back(entropy);
    auto cost =
        realField<C>("thoughtCost", "thought cost",
                     "Urgency u: the loss adds u * sum over steps t of t * the mean gate openness at step "
                     "t, so later steps cost more and the model learns to finish early. Copy-gate updates.",
                     &C::thoughtCost, 0, 10, 0.005, FieldRange::Custom);
    cost.check = [](const C& c) {
        if (c.thoughtCost < 0 || c.thoughtCost > 10)
            return "must be between 0 and 10, got " + numberText(c.thoughtCost);
        if (c.thoughtCost > 0 && !c.gated())
            return std::string(
                "charges copy-gate openness and needs a copy-gated update, got a residual one: set "
                "it to 0");
        return std::string();
    };
    cost.applies = [](const C& c) { return c.gated() || c.thoughtCost != 0; };
    t.push_back(cost);
    auto halt =
        realField<C>("haltThreshold", "halt below",
                     "At evaluation an example stops after the first step at which every position's signal "
                     "(see halt on) is below this, and its answer is read there. 'off' runs every step.",
                     &C::haltThreshold, 0, 0.99, 0.01, FieldRange::Custom, "off");
    halt.check = [](const C& c) {
        if (c.haltThreshold < 0 || c.haltThreshold >= 1)
            return "must be 0 (no halting) or in (0, 1), got " + numberText(c.haltThreshold);
        if (c.haltThreshold > 0 && c.haltOn == HaltSignal::Gates && !c.gated())
            return std::string(
                "halts on copy gates and needs a copy-gated update, got a residual one: set it to 0, "
                "or halt on the change (haltOn \"change\")");
        return std::string();
    };
    halt.applies = [](const C& c) {
        return c.gated() || c.haltOn == HaltSignal::Change || c.haltThreshold != 0;
    };
    t.push_back(halt);
    t.push_back(choiceField<C>(
        "haltOn", "halt on",
        "What halting reads. gates: each position's mean copy gate (ThoughtNet: its learned "
        "operators' weight). change: how far the step moved each position's state, |Δh| / "
        "|h|.",
        &C::haltOn, {{HaltSignal::Gates, "gates", "gates"}, {HaltSignal::Change, "change", "change"}}));
    return t;
}

void validateEncoder(const ModelConfig& m, const TaskConfig& task, const std::string& at, Problems& p) {
    const C& c = enc(m);
    if (relativePositions(c.positional) && c.attention == AttentionKind::Geometric)
        p.add(at + ".positional",
              "relative positions are part of softmax attention's scores; geometric attention "
              "has its own directional encoding: use softmax attention, or positional none");
    if (c.geomNorm == GeomNorm::L1 && c.attention != AttentionKind::Geometric)
        p.add(at + ".geomNorm", "l1 normalisation needs geometric attention; set it to off for softmax");
    if (c.readout == ReadoutColumn::First && answersPerExample(task) > 1)
        p.add(at + ".readout",
              "multi-digit arithmetic reads answer digit k at position k; 'first' is for tasks "
              "with one answer per example: set it to last");
}

ModelFacts facts(const ModelConfig& m) {
    const C& c = enc(m);
    ModelFacts f;
    f.stepped = true;
    f.steps = c.steps;
    f.evalSteps = c.effectiveEvalSteps();
    f.sharedSteps = c.sharedWeights;
    f.gates = c.gated();
    f.gateName = "copy gate";
    f.heads = c.heads;
    f.headRouting = c.headRouting;
    f.routeTopK = c.routeTopK;
    f.routeRule = c.routeDropped == DroppedHeads::SeedExact ? "seed-exact" : "masked";
    f.thoughtCost = c.gated() ? c.thoughtCost : 0;
    f.haltThreshold = c.haltThreshold;
    f.haltOn = c.haltOn;
    f.halts[int(HaltSignal::Gates)] = c.gated();
    f.halts[int(HaltSignal::Change)] = true;
    f.readout = c.readout;
    f.readoutChoice = true;
    return f;
}

// The large products of one training step: per linear map Y = X W^T (N, out, in) its forward, the input
// gradient dX = dY W and the weight gradient dW = dY^T X. The last step's update runs on the rows read
// alone (Encoder::forward), so its update's maps have batch * readouts rows there.
std::vector<ProductShape> stepProducts(const ModelConfig& m, long long rows, int symbols, int batch,
                                       int readouts) {
    const C& c = enc(m);
    const long long D = c.dModel, F = c.dFF, H = c.heads;
    const bool geo = c.attention == AttentionKind::Geometric, gated = c.gated();
    std::vector<std::pair<long long, long long>> maps; // (out, in)
    maps.push_back({geo ? 3 * D + 2 * H : 3 * D, D});
    maps.push_back({D, D});
    const size_t attentionMaps = maps.size(); // the first maps, which read every row at every step
    maps.push_back({F + (gated ? D : 0), D});
    maps.push_back({D, F});
    if (gated)
        maps.push_back({D, D});
    const bool readRowsLast = !(gated && c.thoughtCost > 0);
    std::vector<ProductShape> g;
    for (int s = 0; s < c.steps; ++s)
        for (size_t i = 0; i < maps.size(); ++i) {
            const auto [out, in] = maps[i];
            const long long n =
                readRowsLast && s == c.steps - 1 && i >= attentionMaps ? (long long)batch * readouts : rows;
            addLinearMapProducts(g, n, out, in);
        }
    g.push_back({(long long)batch * readouts, symbols, D});
    return g;
}

std::vector<ModelPreset> presets() {
    std::vector<ModelPreset> out;
    for (const TableOneRow& r : kTableOne) {
        ModelPreset p;
        p.id = r.row;
        p.label = r.label;
        const std::string row = r.row;
        // The gated rows are sized like the run preset's first model (its NDR), the others like its
        // second (its Transformer), as the authors' sweeps size them.
        p.make = [row](const std::vector<ModelConfig>& models) {
            const bool gated = copyGated(enc(tableOneModel(row, 1, 1, 1, 1)).update);
            const ModelConfig& sized = models.at(!gated && models.size() > 1 ? 1 : 0);
            return tableOneModel(row, int(intFieldOf(sized, "dModel", 128)),
                                 int(intFieldOf(sized, "heads", 4)), int(intFieldOf(sized, "dFF", 256)),
                                 int(intFieldOf(sized, "steps", 14)));
        };
        // The row's switches, name and gate dropout; an encoder's sizes, dropouts and rates stay.
        p.apply = [row, make = p.make](ModelConfig& m) {
            if (!m.is<C>()) {
                m = make({m});
                return;
            }
            const ModelConfig r = tableOneModel(row, 1, 1, 1, 1);
            m.name = r.name;
            C& c = m.as<C>();
            c.attention = enc(r).attention;
            c.update = enc(r).update;
            c.positional = enc(r).positional;
            c.geomNorm = enc(r).geomNorm;
            c.gateDropout = enc(r).gateDropout;
        };
        p.matches = [r](const ModelConfig& m) {
            return m.is<C>() && enc(m).attention == r.attention && enc(m).update == r.update &&
                   enc(m).positional == r.positional;
        };
        out.push_back(p);
    }
    // "vanilla": the Transformer row by the name the built-in presets give it.
    out.front().aliases = {"vanilla"};
    return out;
}

void setHalting(ModelConfig& m, double threshold, HaltSignal on) {
    m.as<C>().haltThreshold = threshold;
    m.as<C>().haltOn = on;
}

// Ticking routing on a model without an entropy coefficient starts from the write-up's 0.01.
void edited(ModelConfig& m, const ModelConfig& before) {
    if (!before.is<C>())
        return;
    C& c = m.as<C>();
    if (c.headRouting && !enc(before).headRouting && c.routeEntropy == 0)
        c.routeEntropy = 0.01;
}

} // namespace

ModelConfig ndrModel(int dModel, int heads, int dFF, int steps) {
    ModelConfig m = sizedModel("NDR", dModel, heads, dFF, steps);
    C& c = m.as<C>();
    c.attention = AttentionKind::Geometric;
    c.update = UpdateKind::CopyGate;
    c.positional = PositionalKind::None;
    c.gateDropout = 0.1f;
    return m;
}

ModelConfig vanillaModel(int dModel, int heads, int dFF, int steps) {
    ModelConfig m = sizedModel("Transformer", dModel, heads, dFF, steps);
    C& c = m.as<C>();
    c.attention = AttentionKind::Softmax;
    c.update = UpdateKind::Residual;
    c.positional = PositionalKind::Sinusoidal;
    c.attentionDropout = 0.0f; // the authors' Transformer applies none
    c.gateDropout = 0.0f;      // no gate in a residual layer
    return m;
}

std::vector<std::string> tableOneRows() {
    std::vector<std::string> rows;
    for (const TableOneRow& r : kTableOne)
        rows.push_back(r.row);
    return rows;
}

ModelConfig tableOneModel(const std::string& row, int dModel, int heads, int dFF, int steps) {
    for (const TableOneRow& r : kTableOne) {
        if (row != r.row)
            continue;
        // The gated rows start from NDR (gate dropout), the others from the Transformer (none).
        ModelConfig m = copyGated(r.update) ? ndrModel(dModel, heads, dFF, steps)
                                            : vanillaModel(dModel, heads, dFF, steps);
        m.name = r.label;
        C& c = m.as<C>();
        c.attention = r.attention;
        c.update = r.update;
        c.positional = r.positional;
        return m;
    }
    std::string known;
    for (const std::string& n : tableOneRows())
        known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown Table 1 row '" + row + "': known rows are " + known);
}

std::string tableOneRowOf(const ModelConfig& m) {
    const ModelPreset* p = modelPresetOf(m);
    return p ? p->id : "";
}

const ModelKindInfo& EncoderKind::info() {
    static const ModelKindInfo k = [] {
        ModelKindInfo i;
        i.id = "encoder";
        i.label = "encoder";
        i.help = "the Transformer family configured by the switches below (NDR, vanilla).";
        i.fields = modelFields(fields());
        i.defaults = [] { return ndrModel(128, 4, 256, 14); };
        i.validate = &validateEncoder;
        i.facts = facts;
        i.setHalting = setHalting;
        i.parameterFields = {"attention", "update", "positional", "geomNorm", "sharedWeights",
                             "dModel",    "heads",  "dFF",        "steps",    "headRouting"};
        i.stepProducts = stepProducts;
        i.presets = presets();
        i.edited = edited;
        return i;
    }();
    return k;
}

} // namespace ndr

// When a model could stop thinking about an example: the fixed-point idea of the ThoughtNet reference
// applied to NDR's gates or to the change per step of any model's columns, and a summary of it over
// many examples. Pure functions, no widgets.
#pragma once

#include "core/records/records.h"

#include <vector>

namespace ndr {

// The first step h (0..steps) after which every position's mean gate stays below `threshold` at every
// later step h+1..steps: running more than h steps only copies columns (nearly) unchanged. Equals
// trace.steps when the last step still has an open gate (no fixed point within the run); -1 for a
// trace without gates (a residual model has no such signal).
int haltingStep(const Trace& trace, float threshold);

// A halting rule: the signal (ModelConfig's HaltSignal, config.h) and its threshold. A trained NDR's
// gates stay partly open once its column is computed (the update then equals the column), so gates
// can say "never" where the columns stand still; the change sees that, and applies to every model
// that records it, a Transformer too. hasHaltSignal (config.h) tells which models carry each signal.
struct HaltingRule {
    HaltSignal signal = HaltSignal::Gates;
    float threshold = 0.1f;
    // The model's own learned halting (ModelFacts::learnedHalting, UT + ACT), whose trace records each
    // position's halting weight as its gate, exactly 0 once it has halted: the example halts after the
    // last step with a nonzero weight. signal and threshold do not apply.
    bool learned = false;
};

// The rule `model` halts by where the user chose `chosen`: its own where it has learned halting,
// `chosen` for every other model.
HaltingRule haltingRuleOf(const ModelConfig& model, const HaltingRule& chosen);

// haltingStep on the rule's signal: the first step h after which every position's gate (or change)
// stays below the threshold at every later step (learned: every weight is 0). -1 for a trace without
// that signal.
int haltingStep(const Trace& trace, const HaltingRule& rule);

// The steps an evaluation with ModelConfig::haltThreshold = rule.threshold and haltOn = rule.signal
// runs (docs/design.md §3): the first s (1..steps) after which every position's signal at step s is
// below the threshold, trace.steps when no step gets there; the answer is then stepAnswers[s]. Unlike
// haltingStep it cannot look ahead: a model halting as it goes stops at the first still step even if a
// later one would move again. -1 for a trace without the signal.
int stopStep(const Trace& trace, const HaltingRule& rule);

// Where a model's gates rest and how far they open in a trace: `rest` the median of the trace's mean
// gates over steps and positions (at each step most positions copy), `open` the largest of them.
struct GateLevels {
    float rest = 0, open = 0;
};
GateLevels gateLevels(const Trace& trace); // both 0 for a trace without gates

// A halting threshold that fits the model: halfway from where its gates rest to its most open gate in
// the trace, rounded to 0.005. A gate counts as open only well above where this model's gates rest,
// whether it closes them to 0.02 or only to 0.3, and below the level its open gates reach, whether
// they open to 0.95 or only to 0.45. -1 for a trace without gates.
float suggestedHaltingThreshold(const Trace& trace);

// The first step s (0..steps) from which the readout on [E] is the true answer after every later step
// too: how many steps the model needs for this example, read from its answers rather than its gates,
// so it holds for every model. -1 when the answer after the last step is wrong.
int settledStep(const Trace& trace);

// Halting over several examples of one depth, for one model.
struct HaltingSummary {
    int examples = 0;
    int halted = 0; // examples whose halting step is before the last step
    int minStep = 0, maxStep = 0;
    double meanStep = 0;   // over every example (one that did not halt counts its full run)
    int correctAtHalt = 0; // the readout after the halting step (the last step when ungated) is right
    int settled = 0;       // examples answered right after the last step (settledStep >= 0)
    int minSettled = 0, maxSettled = 0;
    double meanSettled = 0; // over the settled examples
};
// Summarises traces of one model; traces without the rule's signal count only correctAtHalt (at their
// last step).
HaltingSummary summariseHalting(const std::vector<const Trace*>& traces, const HaltingRule& rule);
inline HaltingSummary summariseHalting(const std::vector<const Trace*>& traces, float threshold) {
    return summariseHalting(traces, HaltingRule{HaltSignal::Gates, threshold});
}

} // namespace ndr

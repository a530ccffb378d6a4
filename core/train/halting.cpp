// Halting steps from gate traces (see halting.h).
#include "core/train/halting.h"

#include "core/config/model_kind.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

namespace ndr {

namespace {

// The last step t (1..steps) at which some position's value (row t-1 of a (steps, positions) record)
// is at or above the threshold: the fixed point starts right after it. -1 for a missing record.
int afterLastAtOrAbove(const std::vector<float>& values, int steps, int positions, float threshold) {
    if (values.empty() || positions <= 0 || values.size() < size_t(steps) * size_t(positions))
        return -1;
    for (int t = steps; t >= 1; --t)
        for (int p = 0; p < positions; ++p)
            if (!(values[size_t(t - 1) * size_t(positions) + size_t(p)] < threshold)) // NaN: not still
                return t;
    return 0;
}

} // namespace

int haltingStep(const Trace& trace, float threshold) {
    // The last step with any gate at or above the threshold is the last one that still changed a
    // column.
    return afterLastAtOrAbove(trace.gates, trace.steps, trace.positions, threshold);
}

HaltingRule haltingRuleOf(const ModelConfig& model, const HaltingRule& chosen) {
    if (factsOf(model).learnedHalting.empty())
        return chosen;
    HaltingRule own;
    own.learned = true;
    return own;
}

int haltingStep(const Trace& trace, const HaltingRule& rule) {
    // The smallest normal float: any weight that is not 0 (a subnormal one counts as 0, as it does
    // where the CPU flushes subnormals).
    if (rule.learned)
        return haltingStep(trace, std::numeric_limits<float>::min());
    return rule.signal == HaltSignal::Change
               ? afterLastAtOrAbove(trace.change, trace.steps, trace.positions, rule.threshold)
               : haltingStep(trace, rule.threshold);
}

int stopStep(const Trace& trace, const HaltingRule& rule) {
    if (rule.learned) // weights stay 0 once halted: stopping as it goes is stopping where it halted
        return haltingStep(trace, rule);
    const std::vector<float>& values = rule.signal == HaltSignal::Change ? trace.change : trace.gates;
    const size_t positions = size_t(std::max(trace.positions, 0));
    if (values.empty() || positions == 0 || values.size() < size_t(trace.steps) * positions)
        return -1;
    for (int t = 1; t <= trace.steps; ++t) {
        bool still = true;
        for (size_t p = 0; still && p < positions; ++p)
            still = values[size_t(t - 1) * positions + p] < rule.threshold; // NaN: not still
        if (still)
            return t;
    }
    return trace.steps;
}

GateLevels gateLevels(const Trace& trace) {
    if (trace.gates.empty())
        return {};
    std::vector<float> g = trace.gates;
    auto middle = g.begin() + std::ptrdiff_t(g.size() / 2);
    std::nth_element(g.begin(), middle, g.end());
    const float rest = std::clamp(*middle, 0.0f, 1.0f);
    const float open = std::clamp(*std::max_element(g.begin(), g.end()), rest, 1.0f);
    return {rest, open};
}

float suggestedHaltingThreshold(const Trace& trace) {
    if (trace.gates.empty())
        return -1.0f;
    const GateLevels levels = gateLevels(trace);
    const float threshold = levels.rest + 0.5f * (levels.open - levels.rest);
    return std::clamp(std::round(threshold * 200.0f) / 200.0f, 0.005f, 0.995f);
}

int settledStep(const Trace& trace) {
    const int last = int(trace.stepAnswers.size()) - 1;
    if (last < 0 || trace.stepAnswers[size_t(last)] != trace.answer)
        return -1;
    int s = last;
    while (s > 0 && trace.stepAnswers[size_t(s - 1)] == trace.answer)
        --s;
    return s;
}

HaltingSummary summariseHalting(const std::vector<const Trace*>& traces, const HaltingRule& rule) {
    HaltingSummary s;
    s.minStep = INT_MAX;
    long sum = 0, settledSum = 0;
    int gated = 0;
    s.minSettled = INT_MAX;
    for (const Trace* tr : traces) {
        if (!tr)
            continue;
        ++s.examples;
        if (const int settled = settledStep(*tr); settled >= 0) {
            ++s.settled;
            settledSum += settled;
            s.minSettled = std::min(s.minSettled, settled);
            s.maxSettled = std::max(s.maxSettled, settled);
        }
        const int h = haltingStep(*tr, rule);
        const int readAt = h >= 0 ? h : tr->steps;
        if (readAt < int(tr->stepAnswers.size()) && tr->stepAnswers[size_t(readAt)] == tr->answer)
            ++s.correctAtHalt;
        if (h < 0)
            continue;
        ++gated;
        sum += h;
        s.minStep = std::min(s.minStep, h);
        s.maxStep = std::max(s.maxStep, h);
        s.halted += h < tr->steps;
    }
    if (gated == 0)
        s.minStep = 0;
    if (s.settled == 0)
        s.minSettled = 0;
    s.meanSettled = s.settled > 0 ? double(settledSum) / s.settled : 0;
    s.meanStep = gated > 0 ? double(sum) / gated : 0;
    return s;
}

} // namespace ndr

// Evaluations kept by the history views (see kept_history.h).
#include "ui/plots/kept_history.h"

#include <algorithm>
#include <cmath>

namespace ndrui {

namespace {

bool same(double a, double b) {
    return a == b || (std::isnan(a) && std::isnan(b)); // an empty split's mean is NaN
}

bool same(const std::vector<double>& a, const std::vector<double>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](double x, double y) { return same(x, y); });
}

// Whether two evaluations are the same one: every figure but the probe's trace alike.
bool sameEvaluation(const ndr::EvalRecord& a, const ndr::EvalRecord& b) {
    return a.step == b.step && same(a.elapsedSeconds, b.elapsedSeconds) && same(a.trainLoss, b.trainLoss) &&
           a.depths == b.depths && same(a.accuracy, b.accuracy) && same(a.loss, b.loss) &&
           same(a.baseline, b.baseline) && same(a.trainAccuracy, b.trainAccuracy) &&
           same(a.validAccuracy, b.validAccuracy) && same(a.testAccuracy, b.testAccuracy) &&
           same(a.routeEntropy, b.routeEntropy) && same(a.headShare, b.headShare) &&
           a.haltCounts == b.haltCounts && same(a.everyStepAccuracy, b.everyStepAccuracy) &&
           a.operations == b.operations && a.operationExamples == b.operationExamples &&
           a.operationCorrect == b.operationCorrect;
}

void append(std::vector<ndr::EvalRecord>& kept, std::span<const ndr::EvalRecord> more) {
    for (const ndr::EvalRecord& e : more) {
        kept.push_back(e);
        kept.back().probe = {};
    }
}

} // namespace

void keepHistory(std::vector<ndr::EvalRecord>& kept, std::span<const ndr::EvalRecord> history) {
    const size_t common = std::min(kept.size(), history.size());
    const bool prefix = common == 0 ? kept.empty() || history.empty()
                                    : sameEvaluation(kept.front(), history.front()) &&
                                          sameEvaluation(kept[common - 1], history[common - 1]);
    if (!prefix || history.empty()) {
        kept.clear();
        append(kept, history);
        return;
    }
    kept.resize(common);
    append(kept, history.subspan(common));
}

} // namespace ndrui

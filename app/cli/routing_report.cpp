// Routing and halting lines of the command-line summaries (see routing_report.h).
#include "routing_report.h"

#include "common.h"

#include "core/config/model_kind.h"

#include <cmath>

namespace ndrcli {

std::vector<std::string> routingReport(const ndr::ModelConfig& config, const ndr::EvalRecord& eval, int steps,
                                       const ndr::TaskConfig& task) {
    std::vector<std::string> lines;
    const ndr::ModelFacts facts = ndr::factsOf(config);
    if (facts.headRouting && !eval.headShare.empty()) {
        const int H = int(eval.headShare.size());
        std::string line =
            config.name + ": head routing (" +
            (facts.routeTopK > 0 ? "top-" + std::to_string(facts.routeTopK) + " of " : "all ") +
            std::to_string(H) + " heads";
        if (facts.routeTopK > 0 && facts.routeTopK < H)
            line += ", " + facts.routeRule;
        line += "): entropy " + fixed(eval.routeEntropy, 3) + " of at most " + fixed(std::log(double(H)), 3) +
                "; head shares";
        for (int h = 0; h < H; ++h)
            line += " " + fixed(eval.headShare[size_t(h)], 2);
        lines.push_back(line);
    }
    if (facts.haltThreshold > 0 && !eval.haltCounts.empty() && steps > 0) {
        const bool byChange = facts.haltOn == ndr::HaltSignal::Change;
        std::string line = config.name + ": steps used (halting " + (byChange ? "when the change is " : "") +
                           "below " + fixed(facts.haltThreshold, 2) + ", of " + std::to_string(steps) + "):";
        for (size_t d = 0; d < eval.haltCounts.size() && d < eval.depths.size(); ++d)
            line += (d ? ", " : " ") + ndr::depthColumnName(task, eval.depths[d]) + " " +
                    fixed(eval.meanHaltStep(d), 1);
        const double used = ndr::meanStepsRun(eval);
        line += "; compute saved " + fixed(100.0 * (1.0 - used / steps), 0) + "%";
        lines.push_back(line);
        if (eval.everyStepAccuracy.size() == eval.depths.size()) {
            std::string every = config.name + ": accuracy running every step:";
            for (size_t d = 0; d < eval.depths.size(); ++d)
                every += (d ? ", " : " ") + ndr::depthColumnName(task, eval.depths[d]) + " " +
                         fixed(eval.everyStepAccuracy[d], 3);
            lines.push_back(every);
        }
    }
    return lines;
}

} // namespace ndrcli

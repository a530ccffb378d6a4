// What head routing and gate halting did in an evaluation, as lines for the `ndr train` and `ndr eval`
// summaries (docs/design.md §2-3).
#pragma once

#include "core/config/config.h"
#include "core/records/records.h"

#include <string>
#include <vector>

namespace ndrcli {

// For a model with head routing: the routing entropy (against its maximum, log H) and each head's share.
// For a model with a halt threshold: the mean steps run per depth and the compute saved against the
// fixed step count `steps`. Nothing for a model with neither, or an evaluation without the figures.
std::vector<std::string> routingReport(const ndr::ModelConfig& config, const ndr::EvalRecord& eval, int steps,
                                       const ndr::TaskConfig& task);

} // namespace ndrcli

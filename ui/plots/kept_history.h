// The evaluations a history view keeps of one model, brought in step with the run record's history by
// appending what is new rather than copying it all at each redraw.
#pragma once

#include "core/records/records.h"

#include <span>
#include <vector>

namespace ndrui {

// Brings `kept` in step with `history`: when the evaluations kept are still history's first ones
// (the first and the last kept are compared, every figure but the probe's trace), the newer ones are
// appended, or for a shorter history (a frame of the past) the later kept ones dropped; otherwise
// history is copied afresh. Kept evaluations leave out `probe`, the traces of the probe example,
// which no history view draws.
void keepHistory(std::vector<ndr::EvalRecord>& kept, std::span<const ndr::EvalRecord> history);

} // namespace ndrui

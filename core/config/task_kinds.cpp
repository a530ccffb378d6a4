// The task kinds' rows (task_kinds.h).
#include "core/config/task_kinds.h"

#include <stdexcept>
#include <string>

namespace ndr {

namespace {

// Depth 40 is already far beyond what a few dozen steps can route; the bound keeps evaluation sets
// (one per depth) and input lengths small.
constexpr int kMaxCtlDepth = 40;
// An arithmetic or ListOps expression has at most 50 tokens (docs/design.md §1): past depth 10 hardly
// one draw in a million fits, so evaluation sets could not be drawn. A lone digit (depth 1) is no question.
constexpr int kMinTreeDepth = 2, kMaxTreeDepth = 10;
// Multi-digit arithmetic's depths are its eight problem kinds (docs/design.md §1).
constexpr int kMultiDigitKinds = 8;

} // namespace

const std::vector<TaskKindFacts>& taskKinds() {
    static const std::vector<TaskKindFacts> kinds = {
        {TaskKind::Ctl, "ctl", "table lookup", 1, kMaxCtlDepth, true, false, false},
        {TaskKind::Arith, "arith", "arithmetic", kMinTreeDepth, kMaxTreeDepth, false, false, false},
        {TaskKind::ListOps, "listops", "ListOps", kMinTreeDepth, kMaxTreeDepth, false, true, false},
        {TaskKind::MultiDigit, "multidigit", "multi-digit arithmetic", 1, kMultiDigitKinds, false, false,
         true},
    };
    return kinds;
}

const TaskKindFacts& factsOf(TaskKind kind) {
    for (const TaskKindFacts& f : taskKinds())
        if (f.kind == kind)
            return f;
    throw std::invalid_argument("task.kind: no task kind " + std::to_string(int(kind)));
}

} // namespace ndr

// The task kinds (docs/design.md §1) and what a run's configuration, its files, the panel and the
// command line know of each, one row per kind. A new task kind is its row here, its class in
// core/task and its line in makeTask (core/task/task.cpp).
#pragma once

#include "core/config/config.h"

#include <vector>

namespace ndr {

struct TaskKindFacts {
    TaskKind kind;
    const char* name;       // "kind" in config and run files
    const char* title;      // in the experiment panel's task box
    int minDepth, maxDepth; // the depths its generator can draw evaluation sets for
    bool tables;            // has symbols, functions, their tables and an order (table lookup)
    bool operations;        // draws from a chosen subset of ListOps' operations
    bool depthsAreSizes;    // each depth is a problem size, named by its label (multi-digit)
};

// Every task kind, in the order of the panel's box.
const std::vector<TaskKindFacts>& taskKinds();
// The row of `kind`; std::invalid_argument for a value that is no task kind.
const TaskKindFacts& factsOf(TaskKind kind);

} // namespace ndr

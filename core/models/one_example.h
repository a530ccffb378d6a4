// What every model's trace() starts from: the batch of the one example it runs, and the trace with
// its sizes set and room for the attention maps.
#pragma once

#include "core/records/records.h"
#include "core/task/task.h"

#include <vector>

namespace ndr {

// `tokens` as a batch of one example with `readouts` answers, without padding; the targets are unused.
inline Batch oneExampleBatch(const std::vector<int>& tokens, int readouts) {
    Batch batch;
    batch.batch = 1;
    batch.positions = int(tokens.size());
    batch.tokens = tokens;
    batch.readouts = readouts;
    batch.lengths = {int(tokens.size())};
    batch.targets.assign(size_t(readouts), 0);
    batch.depths = {0};
    return batch;
}

// The trace of `steps` steps over `tokens`, with room for `heads` attention maps (T, T) per step.
inline Trace emptyTrace(const std::vector<int>& tokens, int steps, int heads, int symbols, int readouts) {
    Trace tr;
    tr.tokens = tokens;
    tr.steps = steps;
    tr.heads = heads;
    tr.positions = int(tokens.size());
    tr.symbols = symbols;
    tr.readouts = readouts;
    tr.attention.resize(size_t(steps) * size_t(heads) * tokens.size() * tokens.size());
    return tr;
}

} // namespace ndr

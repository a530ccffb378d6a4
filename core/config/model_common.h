// What several model kinds share in their configurations: the signal halting reads and the column an
// answer is read from.
#pragma once

namespace ndr {

// What halting reads (docs/design.md §3). Gates: each position's gate (an encoder's copy gate,
// ThoughtNet's learned operators' weight). Change: how far a step moved each position's state,
// |h_t+1 - h_t| / |h_t|, which every model with columns has.
enum class HaltSignal { Gates, Change };

// The column an encoder reads its one answer from (docs/design.md §1): `[E]`, the last real position,
// or `[B]`, the first.
enum class ReadoutColumn { Last, First };

} // namespace ndr

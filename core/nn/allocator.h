// How a program keeps freed memory for reuse (docs/design.md §6, "Memory").
#pragma once

namespace ndr {

// A training step frees and allocates buffers of a few MiB whose sizes follow its batch. By default
// glibc's allocator maps such a buffer afresh, or hands freed memory at the top of its heap back to the
// kernel, so that every step faults new pages in on first touch. This serves buffers of up to 32 MiB
// from the heap and keeps up to 64 MiB of freed memory there. Call it once, at start-up, before any
// thread allocates; with another C library it does nothing.
void keepFreedMemoryForReuse();

} // namespace ndr

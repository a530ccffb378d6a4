// Keeping freed memory for reuse (see allocator.h).
#include "core/nn/allocator.h"

#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ndr {

void keepFreedMemoryForReuse() {
#if defined(__GLIBC__)
    // 32 MiB is the largest mapping threshold glibc takes. Setting it also ends glibc's own raising of
    // the threshold (from 128 KiB, at each free of a mapped block), and the trim threshold keeps the
    // heap's free top for the next step.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

} // namespace ndr

// Tells ThreadSanitizer about the synchronisation Qt does for us, which it cannot see in Debian's
// uninstrumented Qt (QMutex and QWaitCondition are bare futexes there): a queued call or signal hands
// everything written before it to the receiving thread, and QThread::wait() sees all its thread did.
// Without these, every hand-over between a worker and the window reads as a race. No-ops unless
// built with -fsanitize=thread.
#pragma once

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace ndrui {

// Call handOver(tag) just before posting to another thread, takeOver(tag) where that thread receives;
// the tag is any address both sides know without reading what is handed over (here the worker).
#if defined(__SANITIZE_THREAD__)
inline void handOver(const void* tag) { __tsan_release(const_cast<void*>(tag)); }
inline void takeOver(const void* tag) { __tsan_acquire(const_cast<void*>(tag)); }
#else
inline void handOver(const void*) {}
inline void takeOver(const void*) {}
#endif

} // namespace ndrui

// Tells ThreadSanitizer about the synchronisation Qt does for us, which it cannot see in Debian's
// uninstrumented Qt (QMutex and QWaitCondition are bare futexes there): a queued call or signal hands
// everything written before it to the receiving thread, and QThread::wait() sees all its thread did.
// Without these, every hand-over between a worker and the window reads as a race. No-ops unless
// built with -fsanitize=thread (handOver and takeOver; queueFromThread then only queues).
#pragma once

#include <QMetaObject>
#include <QObject>
#include <utility>

#if defined(__SANITIZE_THREAD__)
#include <cstdint>
#include <mutex>
#include <sanitizer/tsan_interface.h>
#endif

namespace ndrui {

// Keep `const auto held = handOver(tag);` alive across the post (emit of a queued signal, or a queued
// invokeMethod) and call takeOver(tag) where the receiving thread starts; the tag is any address both
// sides know without reading what is handed over (here the worker). Under TSan the guard holds a mutex
// through the post, because Qt copies the call's arguments inside it, after any release we could make
// before it: the receiver's takeOver() locks the same mutex, so the copy happens-before its reads.
#if defined(__SANITIZE_THREAD__)
inline std::recursive_mutex& handOverMutex(const void* tag) {
    static std::recursive_mutex pool[64];
    return pool[(reinterpret_cast<std::uintptr_t>(tag) >> 4) % 64];
}

class HandOverGuard {
public:
    explicit HandOverGuard(const void* tag) : tag_(tag), lock_(handOverMutex(tag)) {}
    ~HandOverGuard() { __tsan_release(const_cast<void*>(tag_)); }
    HandOverGuard(const HandOverGuard&) = delete;
    HandOverGuard& operator=(const HandOverGuard&) = delete;

private:
    const void* tag_;
    std::lock_guard<std::recursive_mutex> lock_;
};

inline HandOverGuard handOver(const void* tag) {
    return HandOverGuard(tag);
}
inline void takeOver(const void* tag) {
    const std::lock_guard<std::recursive_mutex> lock(handOverMutex(tag));
    __tsan_acquire(const_cast<void*>(tag));
}
#else
struct HandOverGuard {
    ~HandOverGuard() {} // user-provided: a guard kept alive is not an unused variable
};
inline HandOverGuard handOver(const void*) {
    return {};
}
inline void takeOver(const void*) {}
#endif

// Queues `call` to run on `receiver`'s thread from a plain std::thread (a loader or a writer): the
// call's captures are handed over under a tag that needs none of them, so the receiving side takes
// them over before it reads one.
template <typename Call> void queueFromThread(QObject* receiver, Call call) {
    static const char tag = 0;
    const auto held = handOver(&tag);
    QMetaObject::invokeMethod(
        receiver,
        [call = std::move(call)]() mutable {
            takeOver(&tag);
            call();
        },
        Qt::QueuedConnection);
}

} // namespace ndrui

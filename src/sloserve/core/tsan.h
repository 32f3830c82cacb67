#pragma once
// Happens-before edges that ThreadSanitizer cannot see, declared by hand. gRPC (Debian's
// build, not instrumented) hands a tag from the thread that starts an operation to the
// thread that takes it off a completion queue through its own locks, which TSan does not
// see: without these, every field of a call written before the hand-off and read after it
// would be reported. TsanRelease(tag) just before the tag goes to gRPC, TsanAcquire(tag)
// just after a completion queue returns it. No-ops outside TSan builds.
#if defined(__SANITIZE_THREAD__)
#define SLOSERVE_TSAN_ENABLED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLOSERVE_TSAN_ENABLED 1
#endif
#endif

#ifdef SLOSERVE_TSAN_ENABLED
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace sloserve {

inline void TsanRelease([[maybe_unused]] const void* tag) {
#ifdef SLOSERVE_TSAN_ENABLED
  __tsan_release(const_cast<void*>(tag));
#endif
}

inline void TsanAcquire([[maybe_unused]] const void* tag) {
#ifdef SLOSERVE_TSAN_ENABLED
  __tsan_acquire(const_cast<void*>(tag));
#endif
}

}  // namespace sloserve

#pragma once
// Clang thread-safety analysis (-Wthread-safety) annotations, as in
// https://clang.llvm.org/docs/ThreadSafetyAnalysis.html. They expand to nothing on other
// compilers (GCC builds ignore them); the clang builds (build-tsan in scripts/test) check
// them at compile time: a field marked GUARDED_BY(mu_) read or written without holding
// mu_ is a compile error there (warnings are errors).
//
// Use them with sloserve::Mutex / MutexLock / CondVar (core/mutex.h); std::mutex and
// std::lock_guard carry no annotations, so the analysis cannot see them.

#if defined(__clang__)
#define SLOSERVE_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define SLOSERVE_THREAD_ANNOTATION_(x)
#endif

// On a class: it is a capability (a lock); `x` names its kind in messages ("mutex").
#define CAPABILITY(x) SLOSERVE_THREAD_ANNOTATION_(capability(x))
// On a class: an RAII object that holds a capability for its lifetime (MutexLock).
#define SCOPED_CAPABILITY SLOSERVE_THREAD_ANNOTATION_(scoped_lockable)

// On a data member (or global): reads need `x` held (shared or exclusive), writes need it
// held exclusively.
#define GUARDED_BY(x) SLOSERVE_THREAD_ANNOTATION_(guarded_by(x))
// On a pointer member: the pointee is guarded by `x` (the pointer itself is not).
#define PT_GUARDED_BY(x) SLOSERVE_THREAD_ANNOTATION_(pt_guarded_by(x))

// Lock ordering: this lock is taken before / after the listed ones.
#define ACQUIRED_BEFORE(...) SLOSERVE_THREAD_ANNOTATION_(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) SLOSERVE_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))

// On a function: callers must hold the capabilities (exclusively / shared).
#define REQUIRES(...) SLOSERVE_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) SLOSERVE_THREAD_ANNOTATION_(requires_shared_capability(__VA_ARGS__))

// On a function: it acquires / releases the capabilities (none listed: `this`).
#define ACQUIRE(...) SLOSERVE_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) SLOSERVE_THREAD_ANNOTATION_(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) SLOSERVE_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) SLOSERVE_THREAD_ANNOTATION_(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) SLOSERVE_THREAD_ANNOTATION_(release_generic_capability(__VA_ARGS__))
// On a function returning bool: it acquired the capabilities iff it returned `b`.
#define TRY_ACQUIRE(...) SLOSERVE_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) \
  SLOSERVE_THREAD_ANNOTATION_(try_acquire_shared_capability(__VA_ARGS__))

// On a function: callers must NOT hold the capabilities (it takes them itself).
#define EXCLUDES(...) SLOSERVE_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))

// On a function: it checks at run time that the capability is held; afterwards the
// analysis assumes it is.
#define ASSERT_CAPABILITY(x) SLOSERVE_THREAD_ANNOTATION_(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) SLOSERVE_THREAD_ANNOTATION_(assert_shared_capability(x))

// On a function: it returns (a reference to) the capability `x`.
#define RETURN_CAPABILITY(x) SLOSERVE_THREAD_ANNOTATION_(lock_returned(x))

// On a function: the analysis skips its body. Use sparingly, with a comment saying why
// it is safe (e.g. a constructor or destructor that runs before/after any sharing).
#define NO_THREAD_SAFETY_ANALYSIS SLOSERVE_THREAD_ANNOTATION_(no_thread_safety_analysis)

#pragma once
// sloserve::Mutex: std::mutex with clang thread-safety annotations, a scoped MutexLock and
// a CondVar that waits on it. Annotate what each mutex protects:
//
//   mutable Mutex mu_;
//   std::vector<int> items_ GUARDED_BY(mu_);
//   bool stop_ GUARDED_BY(mu_) = false;
//   CondVar cv_;
//
//   void Push(int x) EXCLUDES(mu_) {
//     {
//       MutexLock lock(mu_);
//       items_.push_back(x);
//     }
//     cv_.NotifyOne();
//   }
//   int Pop() EXCLUDES(mu_) {
//     MutexLock lock(mu_);
//     cv_.Wait(mu_, [&]() REQUIRES(mu_) { return !items_.empty(); });
//     ...
//   }
//
// A predicate lambda reading guarded fields says REQUIRES(mu_) as above: the analysis
// treats a lambda as a function of its own and does not know that Wait calls it with the
// mutex held.
//
// The clang builds check the annotations (-Wthread-safety, see thread_annotations.h);
// under GCC they compile to the plain std::mutex / std::condition_variable code.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "sloserve/core/thread_annotations.h"

namespace sloserve {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // std names, so Mutex is a Lockable (std::scoped_lock etc. accept it; prefer MutexLock,
  // which the analysis understands).
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

  // Tells the analysis that the caller holds this mutex (e.g. in a callback that it
  // cannot annotate). Checks nothing at run time: std::mutex cannot say who holds it.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` from construction to the end of the scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// A condition variable used with a Mutex the caller holds. It wraps
// std::condition_variable (not condition_variable_any, which adds a second internal mutex
// and an allocation): each wait adopts Mutex's std::mutex into a std::unique_lock for the
// wait's duration and releases it again without unlocking, so the caller still holds `mu`
// when the wait returns, exactly as the annotations say.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

  // Blocks until notified (or a spurious wake-up): callers loop on their condition.
  void Wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // Blocks until `pred()` holds (it is called with `mu` held).
  //
  // The predicate overloads are NO_THREAD_SAFETY_ANALYSIS: the analysis cannot match a
  // lambda's REQUIRES(mu_) to the `mu` parameter here and would flag every pred() call,
  // though `mu` is held (REQUIRES(mu) is still checked at each caller). The lambda's own
  // body is checked against its REQUIRES(mu_).
  template <typename Predicate>
  void Wait(Mutex& mu, Predicate pred) REQUIRES(mu) NO_THREAD_SAFETY_ANALYSIS {
    while (!pred()) Wait(mu);
  }

  // Blocks until notified or `deadline`; std::cv_status::timeout once it has passed.
  template <typename Clock, typename Dur>
  std::cv_status WaitUntil(Mutex& mu, const std::chrono::time_point<Clock, Dur>& deadline)
      REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const std::cv_status status = cv_.wait_until(lock, deadline);
    lock.release();
    return status;
  }
  // Blocks until `pred()` holds or `deadline`; returns pred() (false: timed out).
  template <typename Clock, typename Dur, typename Predicate>
  bool WaitUntil(Mutex& mu, const std::chrono::time_point<Clock, Dur>& deadline, Predicate pred)
      REQUIRES(mu) NO_THREAD_SAFETY_ANALYSIS {
    while (!pred()) {
      if (WaitUntil(mu, deadline) == std::cv_status::timeout) return pred();
    }
    return true;
  }
  // As WaitUntil, `timeout` from now (on the steady clock).
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(Mutex& mu, const std::chrono::duration<Rep, Period>& timeout, Predicate pred)
      REQUIRES(mu) NO_THREAD_SAFETY_ANALYSIS {
    return WaitUntil(mu, std::chrono::steady_clock::now() + timeout, std::move(pred));
  }

 private:
  std::condition_variable cv_;
};

}  // namespace sloserve

#include "sloserve/core/mutex.h"

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sloserve {
namespace {

// A queue in the style mutex.h recommends; its annotations are checked by the clang builds.
class Queue {
 public:
  void Push(int x) EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      items_.push_back(x);
    }
    cv_.NotifyAll();
  }
  int Pop() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    cv_.Wait(mu_, [&]() REQUIRES(mu_) { return !items_.empty(); });
    const int x = items_.front();
    items_.erase(items_.begin());
    return x;
  }
  bool PopFor(std::chrono::milliseconds timeout, int* x) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (!cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) { return !items_.empty(); })) return false;
    *x = items_.front();
    items_.erase(items_.begin());
    return true;
  }
  size_t size() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return items_.size();
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<int> items_ GUARDED_BY(mu_);
};

TEST(MutexTest, GuardsACounterAcrossThreads) {
  struct {
    Mutex mu;
    int64_t n GUARDED_BY(mu) = 0;
  } shared;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        MutexLock lock(shared.mu);
        ++shared.n;
      }
    });
  }
  for (auto& t : threads) t.join();
  MutexLock lock(shared.mu);
  EXPECT_EQ(shared.n, 40000);
}

TEST(MutexTest, TryLockFailsWhileHeld) {
  Mutex mu;
  auto try_from_another_thread = [&] {
    bool got = false;
    std::thread([&] {
      if (mu.try_lock()) {
        got = true;
        mu.unlock();
      }
    }).join();
    return got;
  };
  EXPECT_TRUE(try_from_another_thread());
  mu.lock();
  EXPECT_FALSE(try_from_another_thread());
  mu.unlock();
  EXPECT_TRUE(try_from_another_thread());
}

TEST(CondVarTest, WaitReturnsWithTheMutexHeldOnceThePredicateHolds) {
  Queue q;
  std::thread producer([&] {
    for (int i = 1; i <= 100; ++i) q.Push(i);
  });
  int64_t sum = 0;
  for (int i = 0; i < 100; ++i) sum += q.Pop();
  producer.join();
  EXPECT_EQ(sum, 5050);
  EXPECT_EQ(q.size(), 0u);
}

TEST(CondVarTest, TimedWaitsReportTimeoutOrSuccess) {
  Queue q;
  int x = 0;
  EXPECT_FALSE(q.PopFor(std::chrono::milliseconds(1), &x));  // nothing ever pushed
  q.Push(7);
  EXPECT_TRUE(q.PopFor(std::chrono::milliseconds(0), &x));  // already true: no wait
  EXPECT_EQ(x, 7);

  Mutex mu;
  CondVar cv;
  MutexLock lock(mu);
  const auto past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  EXPECT_EQ(cv.WaitUntil(mu, past), std::cv_status::timeout);
  EXPECT_FALSE(cv.WaitUntil(mu, past, [] { return false; }));
  EXPECT_TRUE(cv.WaitUntil(mu, past, [] { return true; }));
}

}  // namespace
}  // namespace sloserve

// Steps run for the driver's thread by another thread (Driver::BeginInline, issue 38):
// allowed only while that thread sleeps on its condition variable with nothing posted;
// while they run, the driver's thread does not return from WaitForWork whatever wakes
// it; EndInline wakes it when the inline step left something due before its deadline.
// No assertion depends on how long anything takes: a missing wake-up hangs the test
// (and ctest's timeout fails it).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "sloserve/engine/clock.h"
#include "sloserve/engine/driver.h"
#include "sloserve/engine/engine.h"
#include "support/puppet_executor.h"
#include "support/test_policies.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

class DriverInlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<WorkerSpec> w(2);
    w[0].name = "w0";
    w[1].name = "w1";
    auto engine = Engine::Create(
        &suite_, w, testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(1, 0)), &exec_,
        EngineOptions{}, 1);
    ASSERT_TRUE(engine.ok());
    engine_ = std::move(engine).value();
    driver_.Bind(engine_.get(), &exec_);
  }
  // Starts the driver's thread: one WaitForWork (no deadline), then `returned_`.
  void SleepOnce() {
    thread_ = std::thread([this] {
      driver_.WaitForWork(clock_, kTimeInfinite);
      returned_ = true;
    });
  }
  // Waits until the driver's thread sleeps and takes the driver from it.
  void Begin() {
    while (!driver_.BeginInline()) std::this_thread::yield();
  }

  const ProfileSuite suite_ = testing::SmallSuite();
  testing::PuppetExecutor exec_;
  Driver driver_{DriverOptions{}};
  std::unique_ptr<Engine> engine_;
  const SteadyClock clock_;
  std::thread thread_;
  std::atomic<bool> returned_{false};
};

TEST_F(DriverInlineTest, NotWhileTheDriversThreadIsAwake) {
  EXPECT_FALSE(driver_.BeginInline());  // nobody sleeps in WaitForWork
}

TEST_F(DriverInlineTest, AnArrivalRunsOnTheCallersThreadAndTheSleeperStaysAsleep) {
  SleepOnce();
  Begin();
  EXPECT_FALSE(driver_.BeginInline());  // one owner at a time
  std::thread::id ran_on;
  std::vector<Driver::EngineStep> steps;
  steps.push_back([&](Engine&, TimePoint) { ran_on = std::this_thread::get_id(); });
  driver_.PostArrivalsInline(steps);
  EXPECT_TRUE(steps.empty());
  EXPECT_EQ(driver_.Step(clock_.Now()), 1);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  // Woken while the step is owned here: the driver's thread waits for EndInline.
  driver_.Wake();
  EXPECT_FALSE(returned_.load());
  driver_.EndInline();
  thread_.join();
  EXPECT_TRUE(returned_.load());
}

TEST_F(DriverInlineTest, EndInlineWakesTheSleeperWhenSomethingIsNowDueEarlier) {
  SleepOnce();
  Begin();
  ActionResult r;
  driver_.PostAt(std::move(r), clock_.Now() + Seconds(1));  // before "no deadline"
  EXPECT_FALSE(returned_.load());
  driver_.EndInline();
  thread_.join();  // hangs if EndInline left it asleep
  EXPECT_TRUE(returned_.load());
}

TEST_F(DriverInlineTest, APostAfterTheInlineStepIsNotLost) {
  SleepOnce();
  Begin();
  EXPECT_EQ(driver_.Step(clock_.Now()), 0);
  // Another thread's arrival after the owner's last step: the sleeper handles it.
  std::atomic<bool> ran{false};
  driver_.PostArrival([&](Engine&, TimePoint) { ran = true; });
  driver_.EndInline();
  thread_.join();
  EXPECT_EQ(driver_.Step(clock_.Now()), 1);
  EXPECT_TRUE(ran.load());
}

}  // namespace
}  // namespace sloserve

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

// Results read on another component's thread (serve's gRPC queue thread reading remote
// workers' replies, RemoteExecutor::DrainOn): PostQuietly does not wake the sleeping
// driver's thread, and StepOrWake runs the inline stepper on the poster's thread, which
// handles them there; the driver's thread sleeps on.
TEST_F(DriverInlineTest, AQuietPostIsSteppedOnThePostersThreadWhileTheDriverSleeps) {
  std::thread::id stepped_on;
  int64_t handled = -1;
  driver_.SetInlineStepper([&] {
    if (!driver_.BeginInline(/*posted=*/true)) return false;
    stepped_on = std::this_thread::get_id();
    handled = driver_.Step(clock_.Now());
    driver_.EndInline();
    return true;
  });
  SleepOnce();
  Begin();  // it sleeps now; nothing is due, so EndInline leaves it asleep
  driver_.EndInline();
  ActionResult r;
  r.worker = 99;  // no such worker: the engine counts it stale
  driver_.PostQuietly(std::move(r));
  EXPECT_FALSE(driver_.BeginInline()) << "something is posted: not an arrival's step";
  driver_.StepOrWake();
  EXPECT_EQ(stepped_on, std::this_thread::get_id());
  EXPECT_EQ(handled, 1);
  EXPECT_FALSE(returned_.load());
  driver_.Wake();
  thread_.join();
}

// When it cannot step (no stepper, or the driver's thread is awake), StepOrWake wakes the
// driver's thread, which handles the result.
TEST_F(DriverInlineTest, AQuietPostWakesTheDriversThreadWhenNoStepRunsForIt) {
  SleepOnce();
  Begin();
  driver_.EndInline();
  ActionResult r;
  r.worker = 99;
  driver_.PostQuietly(std::move(r));
  driver_.StepOrWake();
  thread_.join();  // hangs if StepOrWake left it asleep
  EXPECT_EQ(driver_.Step(clock_.Now()), 1);

  bool stepper_ran = false;
  driver_.SetInlineStepper([&] {
    stepper_ran = true;
    return driver_.BeginInline(/*posted=*/true);  // nobody sleeps: false
  });
  ActionResult again;
  again.worker = 99;
  driver_.PostQuietly(std::move(again));
  driver_.StepOrWake();
  EXPECT_TRUE(stepper_ran);
  EXPECT_EQ(driver_.Step(clock_.Now()), 1);
}

}  // namespace
}  // namespace sloserve

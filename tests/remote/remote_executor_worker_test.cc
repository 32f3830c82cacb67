// Issue 33 item 4: the controller's RemoteExecutor against a WorkerServer in the test's
// own process (tests/remote/in_process_worker.h), whose puppet executor loses, duplicates,
// reorders or delays its replies, and a worker restarted on the same port. Whatever the
// worker does, each action the controller sends gets exactly one result, carrying that
// action's own reply.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "remote/in_process_worker.h"
#include "sloserve/core/tsan.h"
#include "sloserve/grpc/async_unary.h"

namespace sloserve::remote_test {
namespace {

using Kind = PuppetWorkerExecutor::Kind;

class RemoteExecutorWorkerTest : public ::testing::Test {
 protected:
  const ProfileSuite suite_ = testing::SmallSuite();
};

// The worker never answers: the call's deadline fails the action, once; the worker is
// marked down (a deadline means lost), rejoins when its health checks pass, and serves the
// next action. Stopping the worker answers the action it still holds.
TEST_F(RemoteExecutorWorkerTest, ALostReplyFailsTheActionOnceAtItsDeadline) {
  InProcessWorker worker(&suite_);
  Controller controller(&suite_, worker.address(), Millis(300));
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  const int64_t done_before = worker.actions_done();  // the preload

  controller.Run(1);
  ASSERT_TRUE(worker.puppet().WaitSent(1));
  ASSERT_TRUE(controller.sink.WaitResults(1));
  const std::vector<ActionResult> lost = controller.sink.ResultsFor(1);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].status.code(), StatusCode::kUnavailable) << lost[0].status.ToString();
  ASSERT_FALSE(controller.sink.reachability().empty());
  EXPECT_FALSE(controller.sink.reachability().front()) << "the lost call marks the worker down";

  ASSERT_TRUE(controller.sink.WaitReachable(true)) << "health checks pass: it rejoins";
  controller.Run(2);
  ASSERT_TRUE(worker.puppet().WaitSent(2));
  worker.puppet().Answer(1);
  ASSERT_TRUE(controller.sink.WaitResults(2));
  ExpectServed(controller.sink, 2);
  EXPECT_EQ(controller.sink.ResultsFor(1).size(), 1u);
  EXPECT_EQ(worker.actions_done() - done_before, 1);
  worker.Stop();  // within its stop grace, though the first action never ends
}

// The puppet answers after the controller's deadline: the controller has failed the action
// already and the late reply (which the worker does send) changes nothing; the worker goes
// on serving.
TEST_F(RemoteExecutorWorkerTest, AReplyAfterTheDeadlineIsNotASecondResult) {
  InProcessWorker worker(&suite_);
  Controller controller(&suite_, worker.address(), Millis(300));
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  const int64_t done_before = worker.actions_done();  // the preload

  controller.Run(1);
  ASSERT_TRUE(worker.puppet().WaitSent(1));
  ASSERT_TRUE(controller.sink.WaitResults(1));
  EXPECT_FALSE(controller.sink.ResultsFor(1)[0].status.ok());
  worker.puppet().Answer(0);  // too late
  EXPECT_EQ(worker.actions_done() - done_before, 1) << "the worker answered the late action";

  ASSERT_TRUE(controller.sink.WaitReachable(true));
  controller.Run(2);
  ASSERT_TRUE(worker.puppet().WaitSent(2));
  worker.puppet().Answer(1);
  ASSERT_TRUE(controller.sink.WaitResults(2));
  ExpectServed(controller.sink, 2);
  const std::vector<ActionResult> first = controller.sink.ResultsFor(1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_FALSE(first[0].status.ok());
}

// The puppet posts a result twice: the worker answers the call once, and the duplicate
// reaches no other action (here one sent before it and answered after).
TEST_F(RemoteExecutorWorkerTest, ADuplicateResultIsAnsweredOnce) {
  InProcessWorker worker(&suite_);
  Controller controller(&suite_, worker.address(), Seconds(10));
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  const int64_t done_before = worker.actions_done();  // the preload

  controller.Run(1);
  controller.Run(2);
  ASSERT_TRUE(worker.puppet().WaitSent(2));
  worker.puppet().Answer(0);
  worker.puppet().Answer(0);  // the duplicate
  worker.puppet().Answer(1);
  ASSERT_TRUE(controller.sink.WaitResults(1));
  ASSERT_TRUE(controller.sink.WaitResults(2));
  ExpectServed(controller.sink, 1);
  ExpectServed(controller.sink, 2);
  EXPECT_EQ(worker.actions_done() - done_before, 2);
}

// DrainOn (serve: its gRPC queue thread reads the workers' replies, issue 38): the calls
// go on the given queue, whose own thread delivers their events; a Run's result is posted
// quietly on that thread, followed there by one StepOrWake; the driver takes no wait.
// After LeaveQueue the calls are on the executor's own queue again (that queue can shut
// down: nothing is left on it), and results are posted as before.
TEST_F(RemoteExecutorWorkerTest, RepliesReadOnAnotherComponentsQueueArePostedQuietlyThere) {
  InProcessWorker worker(&suite_);
  Controller controller(&suite_, worker.address(), Seconds(10));
  QueueDrainer drainer;
  const std::thread::id drainer_id = drainer.id();
  controller.executor->DrainOn(drainer.cq());
  EXPECT_EQ(controller.executor->TakeWait(), nullptr);
  ASSERT_NO_FATAL_FAILURE(controller.Start());

  controller.Run(1);
  ASSERT_TRUE(worker.puppet().WaitSent(1));
  worker.puppet().Answer(0);
  ASSERT_TRUE(controller.sink.WaitResults(1));
  ExpectServed(controller.sink, 1);
  EXPECT_EQ(controller.sink.quiet_posts(), 1);
  EXPECT_EQ(controller.sink.quiet_thread(), drainer_id);
  ASSERT_TRUE(controller.sink.WaitStepsOrWakes(1));
  EXPECT_EQ(controller.sink.step_thread(), drainer_id);

  controller.executor->LeaveQueue();  // its stream is cancelled: its end came on the queue
  drainer.Stop();
  controller.Run(2);  // a new stream, on the executor's own queue
  ASSERT_TRUE(worker.puppet().WaitSent(2));
  worker.puppet().Answer(1);
  ASSERT_TRUE(controller.sink.WaitResults(2));
  ExpectServed(controller.sink, 2);
  EXPECT_EQ(controller.sink.quiet_posts(), 1) << "posted as before";
  EXPECT_EQ(controller.sink.steps_or_wakes(), 1);
}

// While the worker's Run stream answers, the controller skips most of its Health calls
// (ActionReplies carry the worker's instance and queue fill): at least every fifth round
// still asks, for its resident variants. Idle, every round asks. The two periods last as
// long as each other; the counts are compared, not the time.
TEST_F(RemoteExecutorWorkerTest, ARunStreamThatAnswersStandsInForMostHealthChecks) {
  InProcessWorker worker(&suite_);
  Controller controller(&suite_, worker.address(), Seconds(10));  // a check every 50 ms
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  const int64_t before_busy = worker.health_checks();
  const auto busy_start = std::chrono::steady_clock::now();
  ActionId id = 1;
  for (; std::chrono::steady_clock::now() - busy_start < std::chrono::milliseconds(1500); ++id) {
    controller.Run(id);
    ASSERT_TRUE(worker.puppet().WaitSent(static_cast<size_t>(id)));
    worker.puppet().Answer(static_cast<size_t>(id - 1));
    ASSERT_TRUE(controller.sink.WaitResults(static_cast<size_t>(id)));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto busy = std::chrono::steady_clock::now() - busy_start;
  const int64_t busy_checks = worker.health_checks() - before_busy;
  std::this_thread::sleep_for(busy);
  const int64_t idle_checks = worker.health_checks() - before_busy - busy_checks;
  EXPECT_GT(busy_checks, 0) << "every fifth round still asks";
  EXPECT_LT(2 * busy_checks, idle_checks)
      << busy_checks << " checks busy, " << idle_checks << " idle, " << id - 1 << " runs";
  EXPECT_EQ(controller.executor->down_workers(), 0);
  ExpectServed(controller.sink, id - 1);
}

// The engine sends an id already in flight (a bug there): the second fails at once, the
// first is still served.
TEST_F(RemoteExecutorWorkerTest, AnIdAlreadyInFlightFailsAtOnce) {
  InProcessWorker worker(&suite_);
  Controller controller(&suite_, worker.address(), Seconds(10));
  ASSERT_NO_FATAL_FAILURE(controller.Start());

  controller.Run(5);
  ASSERT_TRUE(worker.puppet().WaitSent(1));
  controller.Run(5);
  ASSERT_TRUE(controller.sink.WaitResults(5));
  EXPECT_EQ(controller.sink.ResultsFor(5)[0].status.code(), StatusCode::kInternal);
  worker.puppet().Answer(0);
  ASSERT_TRUE(controller.sink.WaitResults(5, 2));
  EXPECT_TRUE(controller.sink.ResultsFor(5)[1].status.ok());
  EXPECT_EQ(worker.puppet().sent_count(), 1u) << "the duplicate was not sent";
}

// Runs answered in the reverse of their order each reach their own action; a Load and the
// Unload sent after it run in that order, the Unload only once the Load has ended, though
// nothing stops the worker's two gRPC threads from taking them the other way round.
TEST_F(RemoteExecutorWorkerTest, ReorderedRepliesReachTheirActionsAndLifecycleKeepsItsOrder) {
  InProcessWorker worker(&suite_);
  Controller controller(&suite_, worker.address(), Seconds(10));
  ASSERT_NO_FATAL_FAILURE(controller.Start());

  constexpr int kRuns = 6;
  for (ActionId id = 1; id <= kRuns; ++id) controller.Run(id);
  ASSERT_TRUE(worker.puppet().WaitSent(kRuns));
  for (size_t i = kRuns; i-- > 0;) worker.puppet().Answer(i);  // in reverse
  for (ActionId id = 1; id <= kRuns; ++id) {
    ASSERT_TRUE(controller.sink.WaitResults(id));
    ExpectServed(controller.sink, id);
  }

  controller.Load(20, 1);
  controller.Unload(21, 1);
  ASSERT_TRUE(worker.puppet().WaitSent(kRuns + 1));
  EXPECT_EQ(worker.puppet().sent(kRuns).kind, Kind::kLoad) << "the Unload ran first";
  EXPECT_EQ(worker.puppet().sent(kRuns).variant, 1u);
  // The Unload is held while the Load runs (a wait that cannot pass it by mistake: it
  // only gives a wrong order the time to show).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(worker.puppet().sent_count(), static_cast<size_t>(kRuns + 1));
  worker.puppet().Answer(kRuns);
  ASSERT_TRUE(worker.puppet().WaitSent(kRuns + 2));
  EXPECT_EQ(worker.puppet().sent(kRuns + 1).kind, Kind::kUnload);
  worker.puppet().Answer(kRuns + 1);
  ASSERT_TRUE(controller.sink.WaitResults(21));
  const std::vector<ActionId> all = controller.sink.Order();
  ASSERT_EQ(all.size(), static_cast<size_t>(kRuns + 2));
  EXPECT_EQ(all[kRuns], 20u);
  EXPECT_EQ(all[kRuns + 1], 21u);
}

// The worker's process goes away and a new one comes up on the same address: the
// controller marks it down, reconnects, loads the variant resident there again on the new
// process (before it rejoins) and serves on it.
TEST_F(RemoteExecutorWorkerTest, ReconnectsToARestartedWorkerAndLoadsItsResidentsAgain) {
  auto first = std::make_unique<InProcessWorker>(&suite_);
  const uint16_t port = first->port();
  Controller controller(&suite_, first->address(), Seconds(10));
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  controller.Run(1);
  ASSERT_TRUE(first->puppet().WaitSent(1));
  first->puppet().Answer(0);
  ASSERT_TRUE(controller.sink.WaitResults(1));
  ExpectServed(controller.sink, 1);

  first.reset();  // the process is gone
  ASSERT_TRUE(controller.sink.WaitReachable(false));
  EXPECT_EQ(controller.executor->down_workers(), 1);

  InProcessWorker second(&suite_, port);
  ASSERT_EQ(second.port(), port);
  // Its first action: the resident variant loaded again (the health thread waits for it).
  ASSERT_TRUE(second.puppet().WaitSent(1));
  EXPECT_EQ(second.puppet().sent(0).kind, Kind::kLoad);
  EXPECT_EQ(second.puppet().sent(0).variant, 0u);
  EXPECT_EQ(controller.executor->down_workers(), 1) << "rejoined before its residents loaded";
  second.puppet().Answer(0);
  ASSERT_TRUE(controller.sink.WaitReachable(true));
  EXPECT_EQ(controller.executor->down_workers(), 0);

  controller.Run(2);
  ASSERT_TRUE(second.puppet().WaitSent(2));
  second.puppet().Answer(1);
  ASSERT_TRUE(controller.sink.WaitResults(2));
  ExpectServed(controller.sink, 2);
}

}  // namespace
}  // namespace sloserve::remote_test

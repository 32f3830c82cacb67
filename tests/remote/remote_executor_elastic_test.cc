// Issue 34 item 3 against issue 33's in-process workers: an elastic RemoteExecutor (a
// workers file onto two slots) with WorkerServers in the test's own process
// (tests/remote/in_process_worker.h). An address that leaves the set is drained: its batch
// in flight is not cancelled and gets exactly one result, its own reply; its slot is freed
// once it has no call left; a new address joins a free slot and serves.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include "remote/in_process_worker.h"
#include "support/temp_dir.h"

namespace sloserve::remote_test {
namespace {

// Polls `done` until it holds; false if not within kWait.
bool WaitUntil(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

class RemoteExecutorElasticTest : public ::testing::Test {
 protected:
  // A batch of one query (id `id` too) on slot `w`, variant 0.
  void Run(RemoteExecutor& executor, ActionId id, WorkerId w) {
    const TimePoint now = clock_.Now();
    std::vector<Query> queries(1);
    queries[0].id = id;
    queries[0].arrival = now;
    queries[0].deadline = now + Seconds(10);
    RunBatch run;
    run.id = id;
    run.worker = w;
    run.queries = queries;
    run.rows = 1;
    run.earliest_start = now;
    (void)executor.Send(run);
  }

  const ProfileSuite suite_ = testing::SmallSuite();
  SteadyClock clock_;
};

TEST_F(RemoteExecutorElasticTest, ADrainedWorkersBatchEndsOnceAndANewAddressTakesAFreeSlot) {
  InProcessWorker a(&suite_);
  InProcessWorker b(&suite_);
  const testing::ScopedTempDir dir("remote-elastic");
  const std::string path = dir.File("workers.txt");
  std::ofstream(path) << a.address() << "\n";

  PayloadStore payloads(size_t{1} << 20);
  RecordingSink sink;  // outlives the executor
  RemoteExecutorOptions options;
  options.workers_file = path;
  options.slots = 2;
  options.addresses.assign(2, "file:" + path);
  options.health_interval = Millis(50);
  options.health_timeout = Seconds(2);
  options.failures_to_down = 2;
  options.action_timeout = Seconds(10);
  options.reconnect_backoff = Millis(100);
  options.log = [](const std::string&) {};
  RemoteExecutor executor(&suite_, &payloads, std::move(options));
  ASSERT_TRUE(executor.Connect().ok());
  // Counted resident in both slots; A and B load it when they join (at-start loads: recorded
  // by the worker at once, not sent to its puppet). The engine runs only what it believes
  // loaded: a Run of a variant the worker does not hold would be found missing by the next
  // health check (every 50 ms), which marks the worker down and cancels the Run.
  ASSERT_TRUE(executor.Preload(0, 0, {0}).ok());
  ASSERT_TRUE(executor.Preload(1, 0, {0}).ok());
  executor.Attach(&sink);
  EXPECT_EQ(executor.vacant_workers(), 1);
  ASSERT_TRUE(WaitUntil([&] { return executor.down_workers() == 1; })) << "A joins slot 0";

  Run(executor, 1, 0);
  ASSERT_TRUE(a.puppet().WaitSent(1));

  // A leaves and B comes: A's slot is drained (down, its call not cancelled), B joins the
  // free slot 1.
  std::ofstream(path) << b.address() << "\n";
  ASSERT_TRUE(WaitUntil([&] { return executor.vacant_workers() == 0; })) << "B takes slot 1";
  ASSERT_TRUE(WaitUntil([&] { return executor.down_workers() == 1; })) << "B up, A drained";
  Run(executor, 2, 0);  // the engine knows slot 0 is down: fails at once
  ASSERT_TRUE(sink.WaitResults(2));
  EXPECT_EQ(sink.ResultsFor(2)[0].status.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(sink.ResultsFor(1).empty()) << "a drained worker's batch is not cancelled";

  a.puppet().Answer(0);
  ASSERT_TRUE(sink.WaitResults(1));
  const std::vector<ActionResult> drained = sink.ResultsFor(1);
  ASSERT_EQ(drained.size(), 1u);
  EXPECT_TRUE(drained[0].status.ok()) << drained[0].status.ToString();
  ASSERT_EQ(drained[0].solo.size(), 1u);
  EXPECT_EQ(drained[0].solo[0], PuppetWorkerExecutor::Marker(1));
  ASSERT_TRUE(WaitUntil([&] { return executor.vacant_workers() == 1; }))
      << "A's slot is freed once its call has ended";

  Run(executor, 3, 1);
  ASSERT_TRUE(b.puppet().WaitSent(1));
  b.puppet().Answer(0);
  ASSERT_TRUE(sink.WaitResults(3));
  const std::vector<ActionResult> served = sink.ResultsFor(3);
  ASSERT_EQ(served.size(), 1u);
  EXPECT_TRUE(served[0].status.ok()) << served[0].status.ToString();
  EXPECT_EQ(a.puppet().sent_count(), 1u) << "nothing more went to A";
  EXPECT_EQ(sink.ResultsFor(1).size(), 1u);
}

}  // namespace
}  // namespace sloserve::remote_test

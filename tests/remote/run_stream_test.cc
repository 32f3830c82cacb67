// The Run stream (proto RunStream, docs/remote-workers.md "The Run stream"): many batches
// multiplexed on a worker's one stream each reach their own action; a refusal is one
// action's failure and the stream goes on; a stream broken with batches on it fails each
// of them once, and the next batch opens a new stream to the worker's new process.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "remote/in_process_worker.h"
#include "sloserve/proto/worker_service.pb.h"
#include "sloserve/remote/run_stream_batch.h"

namespace sloserve::remote_test {
namespace {

class RunStreamTest : public ::testing::Test {
 protected:
  const ProfileSuite suite_ = testing::SmallSuite();
};

// 200 batches in flight at once on the one stream, answered in a random order from two
// threads (the worker writes its replies from whichever thread posts them): each result
// carries its own batch's reply, once.
TEST_F(RunStreamTest, ManyBatchesOnOneStreamReachTheirActions) {
  InProcessWorker worker(&suite_);
  Controller controller(&suite_, worker.address(), Seconds(20));
  ASSERT_NO_FATAL_FAILURE(controller.Start());

  constexpr size_t kRuns = 200;
  for (ActionId id = 1; id <= kRuns; ++id) controller.Run(id);
  ASSERT_TRUE(worker.puppet().WaitSent(kRuns));
  std::vector<size_t> order(kRuns);
  for (size_t i = 0; i < kRuns; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  auto answer = [&](size_t from) {
    for (size_t k = from; k < kRuns; k += 2) worker.puppet().Answer(order[k]);
  };
  std::thread other(answer, 1);
  answer(0);
  other.join();
  for (ActionId id = 1; id <= kRuns; ++id) {
    ASSERT_TRUE(controller.sink.WaitResults(id));
    ExpectServed(controller.sink, id);
  }
  EXPECT_EQ(controller.executor->down_workers(), 0);
}

// HTTP/2 flow control with the reads started after the writes (issue 38: the controller
// starts its read after a Run's write and the worker after its replies' write, so neither
// sends a window update of its own at once): many times the initial 64 KiB window each
// way with nothing coming back meanwhile — Runs carrying 256 KiB of inputs while the
// worker answers none, then replies carrying 256 KiB of outputs while the controller sends
// nothing — all arrive, whole.
TEST_F(RunStreamTest, TensorsFarBeyondTheInitialWindowFlowBothWays) {
  InProcessWorker worker(&suite_, /*port=*/0, /*reads_inputs=*/true);
  Controller controller(&suite_, worker.address(), Seconds(20), /*payload_bytes=*/64 << 20);
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  // Connect's health check saw the worker read inputs: the Runs carry them.
  constexpr size_t kRuns = 24, kBytes = 256 << 10;  // 6 MiB each way
  for (ActionId id = 1; id <= kRuns; ++id) {
    Tensor t;
    t.name = "in";
    t.datatype = "UINT8";
    t.shape = {static_cast<int64_t>(kBytes)};
    t.data.assign(kBytes, uint8_t{3});
    auto handle = controller.payloads.Put(TensorSet{std::move(t)});
    ASSERT_TRUE(handle.ok()) << handle.status().ToString();
    const TimePoint now = controller.clock.Now();
    std::vector<Query> queries(1);
    queries[0].id = id;
    queries[0].arrival = now;
    queries[0].deadline = now + Seconds(10);
    queries[0].payload = *handle;
    RunBatch run;
    run.id = id;
    run.queries = queries;
    run.rows = 1;
    run.earliest_start = now;
    (void)controller.executor->Send(run);
  }
  ASSERT_TRUE(worker.puppet().WaitSent(kRuns));
  for (size_t i = 0; i < kRuns; ++i) EXPECT_EQ(worker.puppet().sent(i).input_bytes, kBytes) << i;
  for (size_t i = 0; i < kRuns; ++i) worker.puppet().Answer(i, OkStatus(), kBytes);
  for (ActionId id = 1; id <= kRuns; ++id) {
    ASSERT_TRUE(controller.sink.WaitResults(id));
    ExpectServed(controller.sink, id);
    const std::vector<ActionResult> r = controller.sink.ResultsFor(id);
    ASSERT_EQ(r[0].outputs.size(), 1u);
    auto out = controller.payloads.Get(r[0].outputs[0]);
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].data.size(), kBytes);
  }
}

// A batch the worker refuses (more rows than the variant runs) fails alone, with the
// worker's reason; the stream stays up and the next batch on it is served.
TEST_F(RunStreamTest, ARefusalFailsOneBatchAndTheStreamGoesOn) {
  InProcessWorker worker(&suite_);
  Controller controller(&suite_, worker.address(), Seconds(20));
  ASSERT_NO_FATAL_FAILURE(controller.Start());

  const TimePoint now = controller.clock.Now();
  std::vector<Query> queries(1);
  queries[0].id = 1;
  queries[0].arrival = now;
  queries[0].deadline = now + Seconds(10);
  RunBatch big;
  big.id = 1;
  big.queries = queries;
  big.rows = 100000;
  big.earliest_start = now;
  (void)controller.executor->Send(big);
  ASSERT_TRUE(controller.sink.WaitResults(1));
  const std::vector<ActionResult> refused = controller.sink.ResultsFor(1);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_FALSE(refused[0].status.ok());
  EXPECT_NE(refused[0].status.message().find("runs at most"), std::string::npos)
      << refused[0].status.ToString();
  EXPECT_EQ(worker.puppet().sent_count(), 0u);

  controller.Run(2);
  ASSERT_TRUE(worker.puppet().WaitSent(1));
  worker.puppet().Answer(0);
  ASSERT_TRUE(controller.sink.WaitResults(2));
  ExpectServed(controller.sink, 2);
  EXPECT_EQ(controller.executor->down_workers(), 0) << "one refusal is not a fault";
}

// The worker's process goes away with batches on the stream: each fails once (never
// twice, never as another's), the worker is marked down, and once a new process on the
// same address has rejoined, the next batch goes on a new stream and is served.
TEST_F(RunStreamTest, AStreamBrokenMidBatchFailsEachBatchOnceAndReconnects) {
  auto first = std::make_unique<InProcessWorker>(&suite_);
  const uint16_t port = first->port();
  Controller controller(&suite_, first->address(), Seconds(20));
  ASSERT_NO_FATAL_FAILURE(controller.Start());

  constexpr ActionId kRuns = 8;
  for (ActionId id = 1; id <= kRuns; ++id) controller.Run(id);
  ASSERT_TRUE(first->puppet().WaitSent(kRuns));
  first->puppet().Answer(0);  // one is served before the break
  ASSERT_TRUE(controller.sink.WaitResults(1));
  ExpectServed(controller.sink, 1);

  first.reset();  // the process is gone, its stream with it
  for (ActionId id = 2; id <= kRuns; ++id) {
    ASSERT_TRUE(controller.sink.WaitResults(id)) << "action " << id;
    const std::vector<ActionResult> results = controller.sink.ResultsFor(id);
    ASSERT_EQ(results.size(), 1u) << "action " << id;
    EXPECT_EQ(results[0].status.code(), StatusCode::kUnavailable) << results[0].status.ToString();
  }
  ASSERT_TRUE(controller.sink.WaitReachable(false));

  InProcessWorker second(&suite_, port);
  ASSERT_EQ(second.port(), port);
  ASSERT_TRUE(second.puppet().WaitSent(1));  // the resident variant loaded again
  second.puppet().Answer(0);
  ASSERT_TRUE(controller.sink.WaitReachable(true));

  controller.Run(kRuns + 1);
  ASSERT_TRUE(second.puppet().WaitSent(2));
  second.puppet().Answer(1);
  ASSERT_TRUE(controller.sink.WaitResults(kRuns + 1));
  ExpectServed(controller.sink, kRuns + 1);
  for (ActionId id = 1; id <= kRuns; ++id) EXPECT_EQ(controller.sink.ResultsFor(id).size(), 1u);
}

// The controller is destroyed with batches on the stream the worker never answers: every
// one still gets its one result (cancelled), and the destructor returns.
TEST_F(RunStreamTest, DestroyingTheControllerEndsItsBatchesOnce) {
  InProcessWorker worker(&suite_);
  auto controller = std::make_unique<Controller>(&suite_, worker.address(), Seconds(20));
  ASSERT_NO_FATAL_FAILURE(controller->Start());
  for (ActionId id = 1; id <= 4; ++id) controller->Run(id);
  ASSERT_TRUE(worker.puppet().WaitSent(4));
  controller->executor.reset();
  for (ActionId id = 1; id <= 4; ++id) {
    const std::vector<ActionResult> results = controller->sink.ResultsFor(id);
    ASSERT_EQ(results.size(), 1u) << "action " << id;
    EXPECT_FALSE(results[0].status.ok());
  }
}

// A message takes what is queued, in order, up to the byte cap (at least one item, however
// large): items with tensors do not add up past the message limit.
TEST(RunStreamBatchTest, TakesQueuedItemsInOrderUpToTheCap) {
  google::protobuf::RepeatedPtrField<worker::RunRequest> queued, batch;
  const std::string blob(remote::kRunStreamBatchBytes * 6 / 10, 'x');
  for (uint64_t id = 1; id <= 3; ++id) {
    worker::RunRequest* r = queued.Add();
    r->set_action(id);
    r->add_queries()->add_inputs()->set_data(blob);
  }
  worker::RunRequest* small = queued.Add();
  small->set_action(4);
  remote::TakeBatch(&queued, &batch);
  ASSERT_EQ(batch.size(), 1);
  EXPECT_EQ(batch.Get(0).action(), 1u);
  remote::TakeBatch(&queued, &batch);
  ASSERT_EQ(batch.size(), 1);
  EXPECT_EQ(batch.Get(0).action(), 2u);
  remote::TakeBatch(&queued, &batch);  // the last large one and the small one fit together
  ASSERT_EQ(batch.size(), 2);
  EXPECT_EQ(batch.Get(0).action(), 3u);
  EXPECT_EQ(batch.Get(1).action(), 4u);
  EXPECT_TRUE(queued.empty());
}

}  // namespace
}  // namespace sloserve::remote_test

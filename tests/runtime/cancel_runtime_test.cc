// A request whose client went away while it was queued is dropped, not run for nobody
// (issue 16, docs/admission.md "Cancellation"); one already running is served.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "sloserve/runtime/engine_runtime.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

TEST(CancelRuntimeTest, AQueuedRequestOfAGoneClientIsDroppedTheRunningOneServed) {
  ProfileSuite suite = testing::SmallSuite();
  RuntimeOptions o;
  o.deployment.workers = 1;
  o.policy.options["variant"] = "fast";
  o.service.time_scale = 50;  // each batch holds the worker 500 ms: B stays queued
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();

  InferRequest a;
  a.task = "t";
  a.slo = Seconds(20);
  a.client_gone = std::make_shared<std::atomic<bool>>(false);
  InferRequest b = a;
  b.client_gone = std::make_shared<std::atomic<bool>>(false);
  std::promise<InferOutcome> pa, pb;
  (*rt)->Submit(a, [&](InferOutcome out) { pa.set_value(std::move(out)); });
  (*rt)->Submit(b, [&](InferOutcome out) { pb.set_value(std::move(out)); });
  // Wait until B waits in the worker's queue (A runs), so the engine holds it.
  bool queued = false;
  for (int i = 0; i < 500 && !queued; ++i) {
    queued = (*rt)->PrometheusMetrics().find("sloserve_queued_queries 1\n") != std::string::npos;
    if (!queued) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(queued) << (*rt)->PrometheusMetrics();
  a.client_gone->store(true);  // A's client leaves too, but A is already running
  b.client_gone->store(true);
  (*rt)->ClientGone();
  const InferOutcome out_b = pb.get_future().get();
  EXPECT_EQ(out_b.status.code(), StatusCode::kUnavailable);
  EXPECT_NE(out_b.status.message().find("cancelled"), std::string::npos) << out_b.status.ToString();
  const InferOutcome out_a = pa.get_future().get();
  EXPECT_TRUE(out_a.status.ok()) << out_a.status.ToString();
  (*rt)->Stop();
  const MetricsSummary m = (*rt)->Summary();
  EXPECT_EQ(m.cancelled, 1);
  EXPECT_EQ(m.completed, 1);
  EXPECT_NE((*rt)->PrometheusMetrics().find("sloserve_queries_cancelled_total 1\n"),
            std::string::npos);
}

}  // namespace
}  // namespace sloserve

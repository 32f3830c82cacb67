#include "sloserve/engine/engine.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "sloserve/exec/profile_executor.h"
#include "sloserve/policy/policy_spec.h"
#include "support/engine_fixtures.h"
#include "support/puppet_executor.h"
#include "support/test_suite.h"
#include "support/virtual_run.h"

namespace sloserve {
namespace {

using testing::At;
using testing::Policies;
using testing::PuppetExecutor;
using testing::VirtualRun;
using testing::Workers;

TEST(EngineTest, RoundRobinSpreadsAndMaximalBatchingTakesWholeQueue) {
  ProfileSuite suite = testing::SmallSuite();
  PuppetExecutor exec;
  auto engine = Engine::Create(&suite, Workers(2),
                               Policies("round_robin", "edf", {{"variant", "fast"}}), &exec, {}, 1);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  // q1 -> w0 (starts alone), q2 -> w1 (starts alone), q3,q5 -> w0 queue, q4 -> w1 queue.
  for (int i = 0; i < 5; ++i) e.Submit(At(AtMicros(i), Millis(100)), AtMicros(i));
  ASSERT_EQ(exec.sent.size(), 2u);
  EXPECT_EQ(exec.sent[0].worker, 0u);
  EXPECT_EQ(exec.sent[1].worker, 1u);
  EXPECT_EQ(e.workers()[0].queue_length, 2u);
  EXPECT_EQ(e.workers()[1].queue_length, 1u);
  exec.Answer(e, 0, AtMicros(10000));
  ASSERT_EQ(exec.sent.size(), 3u);
  EXPECT_EQ(exec.sent[2].ids, (std::vector<QueryId>{3, 5}));  // both queued, one batch
  EXPECT_EQ(exec.sent[2].rows, 2);
  EXPECT_EQ(suite.variants()[exec.sent[2].variant].name, "fast");
}

TEST(EngineTest, EveryQueryEndsExactlyOnceUnderOverloadAndAdmissionBounds) {
  ProfileSuite suite = testing::SmallSuite(4);
  for (const char* dispatch : {"round_robin", "jsq", "central"}) {
    for (const char* batching : {"edf", "fifo"}) {
      EngineOptions opts;
      opts.max_worker_queue = 5;
      opts.max_central_queue = 50;
      VirtualRun run;
      ASSERT_TRUE(run.Start(&suite, Workers(3),
                            Policies(dispatch, batching, {{"drop_expired", "true"}}), nullptr, opts,
                            7)
                      .ok());
      Engine& e = run.engine();
      std::map<QueryId, int> ended;
      e.set_sink([&](const QueryRecord& r) { ++ended[r.id]; });
      std::mt19937_64 rng(3);
      std::vector<QueryId> ids;
      TimePoint now = kTimeZero;
      for (int i = 0; i < 2000; ++i) {
        now += Micros(static_cast<int64_t>(rng() % 3000));  // ~3x overload
        Query q = At(now, Millis(5 + static_cast<int64_t>(rng() % 60)));
        ids.push_back(run.Submit(q, now));
      }
      run.RunToEnd();
      EXPECT_EQ(e.actions_in_flight(), 0u);
      e.DropAllQueued(now + Seconds(100));
      EXPECT_EQ(e.in_system(), 0u) << dispatch << "/" << batching;
      ASSERT_EQ(ended.size(), ids.size()) << dispatch << "/" << batching;
      for (QueryId id : ids) EXPECT_EQ(ended[id], 1) << "query " << id;
      MetricsSummary m = e.Summarize(now);
      EXPECT_EQ(m.arrived, 2000);
      EXPECT_EQ(m.completed + m.dropped, 2000);
      EXPECT_GT(m.dropped, 0) << "overload with bounded queues must drop";
      EXPECT_GT(m.met, 0);
    }
  }
}

TEST(EngineTest, DropExpiredReportsPolicyDropsAndServesTheRest) {
  ProfileSuite suite = testing::SmallSuite();
  PuppetExecutor exec;
  auto engine = Engine::Create(
      &suite, Workers(1),
      Policies("round_robin", "edf", {{"drop_expired", "true"}, {"variant", "slow"}}), &exec, {},
      1);
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  std::vector<QueryRecord> done;
  e.set_sink([&](const QueryRecord& r) { done.push_back(r); });
  e.Submit(At(kTimeZero, Millis(100)), kTimeZero);      // runs at once
  e.Submit(At(AtMicros(1), Millis(5)), AtMicros(1));    // expires while waiting
  e.Submit(At(AtMicros(2), Millis(500)), AtMicros(2));  // survives
  exec.Answer(e, 0, AtMicros(30000));
  ASSERT_EQ(done.size(), 2u);
  EXPECT_TRUE(done[0].met_slo);
  EXPECT_TRUE(done[1].dropped);
  EXPECT_EQ(done[1].drop_reason, DropReason::kPolicy);
  ASSERT_EQ(exec.sent.size(), 2u);
  EXPECT_EQ(exec.sent[1].ids, (std::vector<QueryId>{3}));
}

TEST(EngineTest, CentralDispatchWaitsForIdleWorkers) {
  ProfileSuite suite = testing::SmallSuite();
  PuppetExecutor exec;
  auto engine = Engine::Create(&suite, Workers(2),
                               Policies("central", "edf", {{"central_batch", "2"}}), &exec, {}, 1);
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  for (int i = 0; i < 7; ++i) e.Submit(At(AtMicros(i), Millis(100)), AtMicros(i));
  // Each idle worker grabbed one query at arrival; the other five wait centrally.
  ASSERT_EQ(exec.sent.size(), 2u);
  EXPECT_EQ(e.workers()[0].queue_length + e.workers()[1].queue_length, 0u);
  exec.Answer(e, 1, AtMicros(10000));
  ASSERT_EQ(exec.sent.size(), 3u);
  EXPECT_EQ(exec.sent[2].worker, 1u);
  EXPECT_EQ(exec.sent[2].ids, (std::vector<QueryId>{3, 4}));  // earliest deadlines first
}

TEST(EngineTest, HandComputedLatenciesInSimulatedTime) {
  // One worker, fixed "fast" variant (10 ms at batch 1, 12 ms at batch 2), p95 = constant.
  ProfileSuite suite = testing::SmallSuite();
  VirtualRun run;
  ASSERT_TRUE(
      run.Start(&suite, Workers(1), Policies("round_robin", "edf", {{"variant", "fast"}})).ok());
  Engine& e = run.engine();
  std::vector<QueryRecord> done;
  e.set_sink([&](const QueryRecord& r) { done.push_back(r); });
  run.Submit(At(kTimeZero, Millis(15)), kTimeZero);                          // q1: 0 -> 10 ms
  run.Submit(At(Millis(1) + kTimeZero, Millis(15)), kTimeZero + Millis(1));  // q2, q3 batch at 10
  run.Submit(At(Millis(2) + kTimeZero, Millis(15)), kTimeZero + Millis(2));
  run.RunToEnd();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].finish, kTimeZero + Millis(10));
  EXPECT_EQ(done[1].start, kTimeZero + Millis(10));
  EXPECT_EQ(done[1].finish, kTimeZero + Millis(22));
  EXPECT_EQ(done[1].batch_size, 2);
  EXPECT_TRUE(done[0].met_slo);
  EXPECT_FALSE(done[1].met_slo);  // deadline 16 ms
  EXPECT_FALSE(done[2].met_slo);  // deadline 17 ms
  MetricsSummary m = e.Summarize(kTimeZero + Millis(22));
  EXPECT_DOUBLE_EQ(m.accuracy, 70.0);
  EXPECT_NEAR(m.violation_rate, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(m.finish_rate, 1.0 / 3.0, 1e-12);
  EXPECT_EQ(m.batches, 2);
}

TEST(EngineTest, ColdStartIsChargedOnceAndCounted) {
  ProfileSuite suite = testing::SmallSuite();
  ProfileSuite with_load;
  // Rebuild with a 50 ms load time on "slow".
  {
    with_load.set_name("load");
    TaskSpec t{"t", Millis(100)};
    with_load.AddTask(t);
    with_load.AddHardware({"hw", 1.0, 4, 0});
    with_load.AddVariant({"slow", 0, 80.0, 0, Millis(50)});
    for (int b = 1; b <= 4; ++b) with_load.AddLatency(0, 0, b, LatencyDistribution({30000}));
  }
  std::vector<WorkerSpec> workers = Workers(1);
  workers[0].preload_none = true;
  VirtualRun run;
  ASSERT_TRUE(run.Start(&with_load, workers, Policies("round_robin", "edf")).ok());
  Engine& e = run.engine();
  std::vector<QueryRecord> done;
  e.set_sink([&](const QueryRecord& r) { done.push_back(r); });
  run.Submit(At(kTimeZero, Millis(500)), kTimeZero);
  EXPECT_EQ(e.workers()[0].residency[0], Residency::kLoading);
  run.RunToEnd();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].finish, kTimeZero + Millis(80));  // 50 ms load + 30 ms compute
  EXPECT_EQ(done[0].start, kTimeZero);                // the cold start is in its service
  EXPECT_EQ(e.workers()[0].residency[0], Residency::kReady);
  const TimePoint t1 = done[0].finish;
  run.Submit(At(t1, Millis(500)), t1);
  run.RunToEnd();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[1].finish - t1, Millis(30));  // resident now
  EXPECT_EQ(e.counters().loads, 1);
  const TimePoint end = done[1].finish;
  EXPECT_EQ(e.Summarize(end).cold_starts, 1);
}

TEST(EngineTest, CreateRejectsBadDeployments) {
  ProfileSuite suite = testing::SmallSuite();
  PuppetExecutor exec;
  EXPECT_FALSE(Engine::Create(&suite, {}, Policies("round_robin", "edf"), &exec, {}, 1).ok());
  std::vector<WorkerSpec> bad = Workers(1);
  bad[0].hardware = 9;
  EXPECT_FALSE(Engine::Create(&suite, bad, Policies("round_robin", "edf"), &exec, {}, 1).ok());
  auto unknown = Engine::Create(
      &suite, Workers(1), Policies("round_robin", "edf", {{"variant", "nope"}}), &exec, {}, 1);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("nope"), std::string::npos);
}

TEST(PolicySpecTest, UnknownPolicyAndTypoOptionsAreErrors) {
  PolicySpec spec;
  spec.dispatch = "round_robn";
  auto a = MakePolicySet(spec);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("round_robin"), std::string::npos);  // lists known names
  spec.dispatch = "round_robin";
  spec.options["varient"] = "x";
  auto b = MakePolicySet(spec);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("varient"), std::string::npos);
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

TEST(EngineTest, PlanningRetiresWorkersAndCostFollowsActiveWorkers) {
  ProfileSuite suite = testing::SmallSuite();
  PuppetExecutor exec;
  PolicySpec spec;
  spec.dispatch = "round_robin";
  spec.planning = "rate";
  spec.options = {{"per_worker_qps", "1"}, {"headroom", "1"}, {"variant", "fast"}};
  auto set = MakePolicySet(spec);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto engine = Engine::Create(&suite, Workers(4), std::move(set).value(), &exec, {}, 1);
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  // Two arrivals in the first 1800 s: 2/1800 qps -> one worker needed.
  e.Submit(At(kTimeZero, Millis(100)), kTimeZero);
  e.Submit(At(kTimeZero + Seconds(1), Millis(100)), kTimeZero + Seconds(1));
  e.OnPlanTick(kTimeZero + Seconds(1800));
  int active = 0;
  for (const WorkerView& w : e.workers()) active += w.active ? 1 : 0;
  EXPECT_EQ(active, 1);
  // Round robin now only uses the one active worker.
  for (size_t i : exec.Unanswered()) exec.Answer(e, i, kTimeZero + Seconds(1800));
  const size_t before = exec.sent.size();
  EXPECT_EQ(before, 2u);
  for (int i = 0; i < 3; ++i)
    e.Submit(At(kTimeZero + Seconds(1800), Millis(100)), kTimeZero + Seconds(1800));
  for (size_t i = before; i < exec.sent.size(); ++i) EXPECT_EQ(exec.sent[i].worker, 0u);
  EXPECT_EQ(e.workers()[0].queue_length, 2u);
  // 4 workers x $1/h for 0.5 h, then 1 worker for 0.5 h = $2.5 over 1 h.
  MetricsSummary m = e.Summarize(kTimeZero + Seconds(3600));
  EXPECT_NEAR(m.cost_usd, 2.5, 1e-9);
  EXPECT_NEAR(m.cost_per_hour, 2.5, 1e-9);
  EXPECT_NEAR(m.core_seconds, 4 * 4 * 1800.0 + 4 * 1800.0, 1e-6);
}

TEST(EngineTest, PlacementRoutesStraightToTheWarmWorker) {
  ProfileSuite suite = testing::SmallSuite();
  PuppetExecutor exec;
  PolicySpec spec;
  spec.placement = "model_aware";
  spec.options = {{"warm_variant", "slow"}};
  auto set = MakePolicySet(spec);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::vector<WorkerSpec> workers = Workers(3);
  for (auto& w : workers) w.preload_none = true;
  workers[2].preload_none = false;
  workers[2].preload = {*suite.FindVariant("slow")};
  auto engine = Engine::Create(&suite, workers, std::move(set).value(), &exec, {}, 1);
  ASSERT_TRUE(engine.ok());
  for (int i = 0; i < 3; ++i) (*engine)->Submit(At(AtMicros(i), Millis(100)), AtMicros(i));
  ASSERT_EQ(exec.sent.size(), 1u);
  EXPECT_EQ(exec.sent[0].worker, 2u);
  EXPECT_EQ((*engine)->workers()[2].queue_length, 2u);
  EXPECT_EQ((*engine)->Summarize(AtMicros(3)).cold_starts, 0);
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

TEST(EngineTest, SharedQueueWorkersBatchStraightFromTheCentralQueue) {
  ProfileSuite suite = testing::SmallSuite();
  PuppetExecutor exec;
  auto engine = Engine::Create(&suite, Workers(2),
                               Policies("shared", "edf", {{"variant", "fast"}, {"max_batch", "2"}}),
                               &exec, {}, 1);
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  for (int i = 0; i < 5; ++i) e.Submit(At(AtMicros(i), Millis(100)), AtMicros(i));
  ASSERT_EQ(exec.sent.size(), 2u);  // each idle worker grabbed the head on arrival
  EXPECT_EQ(exec.sent[0].ids, (std::vector<QueryId>{1}));
  EXPECT_EQ(exec.sent[1].ids, (std::vector<QueryId>{2}));
  EXPECT_EQ(e.workers()[0].queue_length + e.workers()[1].queue_length, 0u);
  exec.Answer(e, 1, AtMicros(10000));
  ASSERT_EQ(exec.sent.size(), 3u);
  EXPECT_EQ(exec.sent[2].worker, 1u);
  EXPECT_EQ(exec.sent[2].ids, (std::vector<QueryId>{3, 4}));  // a batch of max_batch
  exec.Answer(e, 0, AtMicros(10001));
  EXPECT_EQ(exec.sent[3].ids, (std::vector<QueryId>{5}));
  EXPECT_EQ(e.in_system(), 3u);
}

}  // namespace
}  // namespace sloserve

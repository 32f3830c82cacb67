#include "sloserve/engine/engine.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "sloserve/exec/simulated_executor.h"
#include "sloserve/policy/policy_spec.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

// Puppet executor: records launches; the test decides when batches complete.
class PuppetExecutor : public ExecutorPort {
 public:
  struct Launched {
    BatchLaunch launch;
    std::vector<QueryId> ids;
  };
  Duration Launch(const BatchLaunch& b) override {
    Launched l{b, {}};
    for (const Query& q : *b.queries) l.ids.push_back(q.id);
    launched.push_back(l);
    return Millis(10);
  }
  std::vector<Launched> launched;
};

std::vector<WorkerSpec> Workers(int n) {
  std::vector<WorkerSpec> w(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) w[static_cast<size_t>(i)].name = "w" + std::to_string(i);
  return w;
}

PolicySet Policies(const std::string& dispatch, const std::string& batching,
                   std::map<std::string, std::string> options = {}) {
  PolicySpec spec;
  spec.dispatch = dispatch;
  spec.batching = batching;
  spec.options = std::move(options);
  auto set = MakePolicySet(spec);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return std::move(set).value();
}

Query At(TimePoint now, Duration slo) {
  Query q;
  q.deadline = now + slo;
  return q;
}

TEST(EngineTest, RoundRobinSpreadsAndMaximalBatchingTakesWholeQueue) {
  ProfileSuite suite = testing::SmallSuite();
  PuppetExecutor exec;
  auto engine = Engine::Create(&suite, Workers(2),
                               Policies("round_robin", "edf", {{"variant", "fast"}}), &exec, {}, 1);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  // q1 -> w0 (starts alone), q2 -> w1 (starts alone), q3,q5 -> w0 queue, q4 -> w1 queue.
  for (int i = 0; i < 5; ++i) e.Submit(At(AtMicros(i), Millis(100)), AtMicros(i));
  ASSERT_EQ(exec.launched.size(), 2u);
  EXPECT_EQ(exec.launched[0].launch.worker, 0u);
  EXPECT_EQ(exec.launched[1].launch.worker, 1u);
  EXPECT_EQ(e.workers()[0].queue_length, 2u);
  EXPECT_EQ(e.workers()[1].queue_length, 1u);
  e.OnBatchComplete(0, exec.launched[0].launch.batch, AtMicros(10000));
  ASSERT_EQ(exec.launched.size(), 3u);
  EXPECT_EQ(exec.launched[2].ids, (std::vector<QueryId>{3, 5}));  // both queued, one batch
  EXPECT_EQ(exec.launched[2].launch.rows, 2);
  EXPECT_EQ(suite.variants()[exec.launched[2].launch.variant].name, "fast");
}

TEST(EngineTest, EveryQueryEndsExactlyOnceUnderOverloadAndAdmissionBounds) {
  ProfileSuite suite = testing::SmallSuite(4);
  for (const char* dispatch : {"round_robin", "jsq", "central"}) {
    for (const char* batching : {"edf", "fifo"}) {
      SimulatedExecutor exec(ServiceTimeModel(&suite, {}, 7));
      EngineOptions opts;
      opts.max_worker_queue = 5;
      opts.max_central_queue = 50;
      auto engine =
          Engine::Create(&suite, Workers(3),
                         Policies(dispatch, batching, {{"drop_expired", "true"}}), &exec, opts, 1);
      ASSERT_TRUE(engine.ok());
      Engine& e = **engine;
      std::map<QueryId, int> ended;
      e.set_sink([&](const QueryRecord& r) { ++ended[r.id]; });
      std::mt19937_64 rng(3);
      std::vector<QueryId> ids;
      TimePoint now = kTimeZero;
      for (int i = 0; i < 2000; ++i) {
        now += Micros(static_cast<int64_t>(rng() % 3000));  // ~3x overload
        while (exec.NextCompletion() <= now) {
          Completion c = exec.PopCompletion();
          e.OnBatchComplete(c.worker, c.batch, c.at);
        }
        Query q = At(now, Millis(5 + static_cast<int64_t>(rng() % 60)));
        ids.push_back(e.Submit(q, now));
      }
      while (exec.HasPending()) {
        Completion c = exec.PopCompletion();
        e.OnBatchComplete(c.worker, c.batch, c.at);
      }
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
  e.OnBatchComplete(0, exec.launched[0].launch.batch, AtMicros(30000));
  ASSERT_EQ(done.size(), 2u);
  EXPECT_TRUE(done[0].met_slo);
  EXPECT_TRUE(done[1].dropped);
  EXPECT_EQ(done[1].drop_reason, DropReason::kPolicy);
  ASSERT_EQ(exec.launched.size(), 2u);
  EXPECT_EQ(exec.launched[1].ids, (std::vector<QueryId>{3}));
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
  ASSERT_EQ(exec.launched.size(), 2u);
  EXPECT_EQ(e.workers()[0].queue_length + e.workers()[1].queue_length, 0u);
  e.OnBatchComplete(1, exec.launched[1].launch.batch, AtMicros(10000));
  ASSERT_EQ(exec.launched.size(), 3u);
  EXPECT_EQ(exec.launched[2].launch.worker, 1u);
  EXPECT_EQ(exec.launched[2].ids, (std::vector<QueryId>{3, 4}));  // earliest deadlines first
}

TEST(EngineTest, HandComputedLatenciesInSimulatedTime) {
  // One worker, fixed "fast" variant (10 ms at batch 1, 12 ms at batch 2), p95 = constant.
  ProfileSuite suite = testing::SmallSuite();
  SimulatedExecutor exec(ServiceTimeModel(&suite, {}, 1));
  auto engine = Engine::Create(&suite, Workers(1),
                               Policies("round_robin", "edf", {{"variant", "fast"}}), &exec, {}, 1);
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  std::vector<QueryRecord> done;
  e.set_sink([&](const QueryRecord& r) { done.push_back(r); });
  e.Submit(At(kTimeZero, Millis(15)), kTimeZero);                          // q1: 0 -> 10 ms
  e.Submit(At(Millis(1) + kTimeZero, Millis(15)), kTimeZero + Millis(1));  // q2, q3 batch at 10
  e.Submit(At(Millis(2) + kTimeZero, Millis(15)), kTimeZero + Millis(2));
  while (exec.HasPending()) {
    Completion c = exec.PopCompletion();
    e.OnBatchComplete(c.worker, c.batch, c.at);
  }
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
  SimulatedExecutor exec(ServiceTimeModel(&with_load, {}, 1));
  std::vector<WorkerSpec> workers = Workers(1);
  workers[0].preload_none = true;
  auto engine = Engine::Create(&with_load, workers, Policies("round_robin", "edf"), &exec, {}, 1);
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  std::vector<QueryRecord> done;
  e.set_sink([&](const QueryRecord& r) { done.push_back(r); });
  e.Submit(At(kTimeZero, Millis(500)), kTimeZero);
  Completion c = exec.PopCompletion();
  EXPECT_EQ(c.at, kTimeZero + Millis(80));  // 50 ms load + 30 ms compute
  e.OnBatchComplete(c.worker, c.batch, c.at);
  e.Submit(At(c.at, Millis(500)), c.at);
  Completion c2 = exec.PopCompletion();
  EXPECT_EQ(c2.at - c.at, Millis(30));  // resident now
  e.OnBatchComplete(c2.worker, c2.batch, c2.at);
  EXPECT_EQ(e.Summarize(c2.at).cold_starts, 1);
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
  size_t before = exec.launched.size();
  for (auto& l : exec.launched)
    e.OnBatchComplete(l.launch.worker, l.launch.batch, kTimeZero + Seconds(1800));
  for (int i = 0; i < 3; ++i)
    e.Submit(At(kTimeZero + Seconds(1800), Millis(100)), kTimeZero + Seconds(1800));
  for (size_t i = before; i < exec.launched.size(); ++i)
    EXPECT_EQ(exec.launched[i].launch.worker, 0u);
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
  ASSERT_EQ(exec.launched.size(), 1u);
  EXPECT_EQ(exec.launched[0].launch.worker, 2u);
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
  ASSERT_EQ(exec.launched.size(), 2u);  // each idle worker grabbed the head on arrival
  EXPECT_EQ(exec.launched[0].ids, (std::vector<QueryId>{1}));
  EXPECT_EQ(exec.launched[1].ids, (std::vector<QueryId>{2}));
  EXPECT_EQ(e.workers()[0].queue_length + e.workers()[1].queue_length, 0u);
  e.OnBatchComplete(1, exec.launched[1].launch.batch, AtMicros(10000));
  ASSERT_EQ(exec.launched.size(), 3u);
  EXPECT_EQ(exec.launched[2].launch.worker, 1u);
  EXPECT_EQ(exec.launched[2].ids, (std::vector<QueryId>{3, 4}));  // a batch of max_batch
  e.OnBatchComplete(0, exec.launched[0].launch.batch, AtMicros(10001));
  EXPECT_EQ(exec.launched[3].ids, (std::vector<QueryId>{5}));
  EXPECT_EQ(e.in_system(), 3u);
}

}  // namespace
}  // namespace sloserve

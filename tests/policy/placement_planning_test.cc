#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "policy/policy_test_util.h"
#include "sloserve/policy/placement/cluster_placement.h"
#include "sloserve/policy/placement/model_aware_placement.h"
#include "sloserve/policy/placement/random_placement.h"
#include "sloserve/policy/planning/rate_planning.h"
#include "sloserve/policy/planning/static_planning.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

using testing::MakeMachines;
using testing::MakeWorkers;

TEST(RandomPlacementTest, UniformOverActiveWorkersOnly) {
  ProfileSuite suite = testing::SmallSuite();
  auto p = RandomPlacement::Create({}).value();
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.seed = 5;
  ASSERT_TRUE(p->Init(ctx).ok());
  auto workers = MakeWorkers(4);
  const auto machines = MakeMachines(workers);
  workers[2].active = false;
  std::map<WorkerId, int> count;
  const int n = 30000;
  for (int i = 0; i < n; ++i) {
    const PlacementDecision d = p->Place(Query{}, workers, machines, kTimeZero);
    EXPECT_EQ(d.prefetch_worker, kNoId);
    ++count[d.worker];
  }
  EXPECT_EQ(count[2], 0);
  for (WorkerId w : {0u, 1u, 3u})
    EXPECT_NEAR(count[w], n / 3.0, 5 * std::sqrt(n * (1 / 3.0) * (2 / 3.0)));
}

TEST(ModelAwarePlacementTest, PrefersWarmWorkersThenLeastLoaded) {
  ProfileSuite suite = testing::SmallSuite();
  auto p = ModelAwarePlacement::Create(PolicyParams("t", {{"warm_variant", "slow"}})).value();
  PolicyContext ctx;
  ctx.suite = &suite;
  ASSERT_TRUE(p->Init(ctx).ok());
  auto workers = MakeWorkers(3);
  const auto machines = MakeMachines(workers);
  const VariantId slow = *suite.FindVariant("slow");
  workers[1].residency[slow] = Residency::kReady;
  workers[1].queue_length = 5;  // warm but busy still wins over cold
  EXPECT_EQ(p->Place(Query{}, workers, machines, kTimeZero).worker, 1u);
  workers[2].residency[slow] = Residency::kReady;
  workers[2].queue_length = 1;
  EXPECT_EQ(p->Place(Query{}, workers, machines, kTimeZero).worker, 2u);  // least loaded warm
  workers[1].residency[slow] = workers[2].residency[slow] = Residency::kAbsent;
  workers[0].queue_length = 3;
  // Nobody warm: least loaded (3/5/1), which pays the load when its batch runs.
  const PlacementDecision cold = p->Place(Query{}, workers, machines, kTimeZero);
  EXPECT_EQ(cold.worker, 2u);
  EXPECT_EQ(cold.prefetch_worker, kNoId);  // never prefetches (see Place)
  EXPECT_EQ(cold.prefetch_variant, kNoId);
}

TEST(ModelAwarePlacementTest, ALoadUnderWayCountsAsHoldingAnUnloadDoesNot) {
  ProfileSuite suite = testing::SmallSuite();
  auto p = ModelAwarePlacement::Create(PolicyParams("t", {{"warm_variant", "slow"}})).value();
  PolicyContext ctx;
  ctx.suite = &suite;
  ASSERT_TRUE(p->Init(ctx).ok());
  auto workers = MakeWorkers(3);
  const auto machines = MakeMachines(workers);
  const VariantId slow = *suite.FindVariant("slow");
  // Worker 1 is loading the model (busy with the load): the query waits for that load
  // rather than starting a second cold start on idle worker 0 or 2.
  workers[1].residency[slow] = Residency::kLoading;
  workers[1].busy = true;
  EXPECT_EQ(p->Place(Query{}, workers, machines, kTimeZero).worker, 1u);
  // Unloading: as good as absent; every worker is cold, the least loaded one gets it.
  workers[1].residency[slow] = Residency::kUnloading;
  EXPECT_NE(p->Place(Query{}, workers, machines, kTimeZero).worker, 1u);
  // A residency vector shorter than the variant (a worker that never saw it): absent.
  workers[2].residency.clear();
  workers[0].residency[slow] = Residency::kReady;
  workers[0].queue_length = 9;
  EXPECT_EQ(p->Place(Query{}, workers, machines, kTimeZero).worker, 0u);
}

TEST(ModelAwarePlacementTest, AnyVariantOfTheTaskAndWorkersAddedLater) {
  ProfileSuite suite = testing::SmallSuite();
  auto p = ModelAwarePlacement::Create(PolicyParams("t", {})).value();
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.workers = MakeWorkers(2, suite.variants().size());
  ASSERT_TRUE(p->Init(ctx).ok());
  auto workers = ctx.workers;
  // A worker the engine added after Init (id 5) holds a variant of the task.
  workers.push_back(testing::AddedWorker(workers[0], 5));
  workers.back().residency[suite.VariantsOfTask(0).back()] = Residency::kReady;
  workers.back().queue_length = 4;
  const auto machines = MakeMachines(workers);
  EXPECT_EQ(p->Place(Query{}, workers, machines, kTimeZero).worker, 5u);
}

// `warm_variant` with one variant per task: each query's model is its task's named
// variant (a multi-model pool whose selection runs a chosen variant per model), not the
// task's first. Tasks a (a1, a2) and b (b1, b2); worker 0 holds a1 and b2, worker 1 a2
// and b1; colocation sends a query to the idle worker holding its model.
TEST(ClusterPlacementTest, WarmVariantPerTask) {
  ProfileSuite suite;
  suite.set_name("two-tasks");
  TaskSpec a;
  a.name = "a";
  TaskSpec b = a;
  b.name = "b";
  const TaskId ta = suite.AddTask(a);
  const TaskId tb = suite.AddTask(b);
  const HardwareId hw = suite.AddHardware(HardwareSpec{"cpu", 1.0, 4, 16});
  std::map<std::string, VariantId> v;
  for (const auto& [name, task] : std::vector<std::pair<std::string, TaskId>>{
           {"a1", ta}, {"a2", ta}, {"b1", tb}, {"b2", tb}}) {
    v[name] = suite.AddVariant(VariantSpec{name, task, 0, 100, Seconds(1)});
    suite.AddLatency(hw, v[name], 1, LatencyDistribution(std::vector<int64_t>{10000}));
  }
  auto workers = MakeWorkers(2, 4);
  const auto machines = MakeMachines(workers);
  workers[0].residency[v["a1"]] = workers[0].residency[v["b2"]] = Residency::kReady;
  workers[1].residency[v["a2"]] = workers[1].residency[v["b1"]] = Residency::kReady;
  auto place = [&](const std::string& warm, TaskId task) {
    std::map<std::string, std::string> options;
    if (!warm.empty()) options["warm_variant"] = warm;
    auto p = ClusterPlacement::Create(ClusterPolicy::kColocation, PolicyParams("c", options));
    EXPECT_TRUE(p.ok());
    PolicyContext ctx;
    ctx.suite = &suite;
    ctx.workers = workers;
    ctx.machines = machines;
    EXPECT_TRUE((*p)->Init(ctx).ok());
    Query q;
    q.task = task;
    return (*p)->Place(q, workers, machines, kTimeZero).worker;
  };
  EXPECT_EQ(place("a2, b2", ta), 1u);
  EXPECT_EQ(place("a2, b2", tb), 0u);
  EXPECT_EQ(place("", ta), 0u);  // the tasks' first variants
  EXPECT_EQ(place("", tb), 1u);
  EXPECT_EQ(place("a2", ta), 1u);  // one name: every query's model
  // Two variants of one task, or an unknown one, are refused at Init.
  for (const char* bad : {"a1,a2", "a1,zz"}) {
    auto p = ClusterPlacement::Create(ClusterPolicy::kColocation,
                                      PolicyParams("c", {{"warm_variant", bad}}));
    ASSERT_TRUE(p.ok());
    PolicyContext ctx;
    ctx.suite = &suite;
    EXPECT_FALSE((*p)->Init(ctx).ok()) << bad;
  }
}

TEST(RatePlanningTest, KeepsCeilOfRateTimesHeadroomOverCapacity) {
  auto p = RatePlanning::Create(PolicyParams("t", {{"per_worker_qps", "100"}, {"headroom", "1.5"}}))
               .value();
  auto workers = MakeWorkers(10);
  PlanningInput in;
  in.workers = &workers;
  DeploymentPlan plan;
  auto active = [&] {
    return std::count_if(plan.workers.begin(), plan.workers.end(),
                         [](const WorkerPlan& w) { return w.active; });
  };
  in.observed_qps = 310;  // 310 * 1.5 / 100 = 4.65 -> 5
  p->Plan(in, &plan);
  ASSERT_TRUE(plan.change);
  EXPECT_EQ(active(), 5);
  in.observed_qps = 0;
  p->Plan(in, &plan);
  EXPECT_EQ(active(), 1);  // min_workers
  in.observed_qps = 1e6;
  p->Plan(in, &plan);
  EXPECT_EQ(active(), 10);                                         // the pool
  EXPECT_FALSE(RatePlanning::Create(PolicyParams("t", {})).ok());  // per_worker_qps required
}

TEST(RatePlanningTest, EmitsOneWorkerPlanPerWorkerLowestIdsActive) {
  auto p = RatePlanning::Create(PolicyParams("t", {{"per_worker_qps", "100"}, {"headroom", "1"}}))
               .value();
  auto workers = MakeWorkers(4);
  workers[1].pinned = 1;  // settings a plan entry must restate to keep
  workers[1].quota = 0.25;
  // A worker added later (id 6) and a retired one (id 2, gone for good).
  workers.push_back(testing::AddedWorker(workers[0], 6));
  workers[2].phase = WorkerPhase::kRetired;
  workers[2].active = false;
  PlanningInput in;
  in.workers = &workers;
  in.observed_qps = 250;  // 3 workers
  DeploymentPlan plan;
  plan.workers.resize(9);  // stale entries from an earlier call are replaced
  p->Plan(in, &plan);
  ASSERT_TRUE(plan.change);
  ASSERT_EQ(plan.workers.size(), 4u);  // 0, 1, 3, 6: the retired worker is not named
  const WorkerId ids[] = {0, 1, 3, 6};
  for (size_t k = 0; k < 4; ++k) {
    const WorkerPlan& w = plan.workers[k];
    EXPECT_EQ(w.worker, ids[k]);
    EXPECT_EQ(w.active, k < 3) << k;
    EXPECT_FALSE(w.remove);
    EXPECT_TRUE(w.load.empty());
    EXPECT_EQ(w.cores, 0);  // keep
  }
  EXPECT_EQ(plan.workers[1].pinned, 1u);
  EXPECT_EQ(plan.workers[1].quota, 0.25);
  EXPECT_EQ(plan.workers[0].pinned, kNoId);
  in.observed_qps = 1e6;  // the pool: every worker not retired
  p->Plan(in, &plan);
  EXPECT_EQ(plan.workers.size(), 4u);
  EXPECT_TRUE(std::all_of(plan.workers.begin(), plan.workers.end(),
                          [](const WorkerPlan& w) { return w.active; }));
}

TEST(StaticPlanningTest, NeverChanges) {
  auto p = StaticPlanning::Create(PolicyParams("t", {})).value();
  auto workers = MakeWorkers(3);
  PlanningInput in;
  in.workers = &workers;
  in.observed_qps = 1e6;
  DeploymentPlan plan;
  plan.change = true;
  plan.workers.resize(2);
  p->Plan(in, &plan);
  EXPECT_FALSE(plan.change);
  EXPECT_TRUE(plan.workers.empty());
}

}  // namespace
}  // namespace sloserve

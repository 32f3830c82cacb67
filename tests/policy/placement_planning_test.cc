#include <gtest/gtest.h>

#include <map>

#include "policy/policy_test_util.h"
#include "sloserve/policy/placement/model_aware_placement.h"
#include "sloserve/policy/placement/random_placement.h"
#include "sloserve/policy/planning/rate_planning.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

using testing::MakeWorkers;

TEST(RandomPlacementTest, UniformOverActiveWorkersOnly) {
  ProfileSuite suite = testing::SmallSuite();
  auto p = RandomPlacement::Create({}).value();
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.seed = 5;
  ASSERT_TRUE(p->Init(ctx).ok());
  auto workers = MakeWorkers(4);
  workers[2].active = false;
  std::map<WorkerId, int> count;
  const int n = 30000;
  for (int i = 0; i < n; ++i) ++count[p->Place(Query{}, workers, kTimeZero)];
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
  const VariantId slow = *suite.FindVariant("slow");
  workers[1].loaded[slow] = true;
  workers[1].queue_length = 5;  // warm but busy still wins over cold
  EXPECT_EQ(p->Place(Query{}, workers, kTimeZero), 1u);
  workers[2].loaded[slow] = true;
  workers[2].queue_length = 1;
  EXPECT_EQ(p->Place(Query{}, workers, kTimeZero), 2u);  // least loaded warm worker
  workers[1].loaded[slow] = workers[2].loaded[slow] = false;
  workers[0].queue_length = 3;
  EXPECT_EQ(p->Place(Query{}, workers, kTimeZero), 2u);  // nobody warm: least loaded (3/5/1)
}

TEST(RatePlanningTest, KeepsCeilOfRateTimesHeadroomOverCapacity) {
  auto p = RatePlanning::Create(PolicyParams("t", {{"per_worker_qps", "100"}, {"headroom", "1.5"}}))
               .value();
  auto workers = MakeWorkers(10);
  PlanningInput in;
  in.workers = &workers;
  DeploymentPlan plan;
  in.observed_qps = 310;  // 310 * 1.5 / 100 = 4.65 -> 5
  p->Plan(in, &plan);
  ASSERT_TRUE(plan.change);
  EXPECT_EQ(std::count(plan.active.begin(), plan.active.end(), true), 5);
  in.observed_qps = 0;
  p->Plan(in, &plan);
  EXPECT_EQ(std::count(plan.active.begin(), plan.active.end(), true), 1);  // min_workers
  in.observed_qps = 1e6;
  p->Plan(in, &plan);
  EXPECT_EQ(std::count(plan.active.begin(), plan.active.end(), true), 10);  // the pool
  EXPECT_FALSE(RatePlanning::Create(PolicyParams("t", {})).ok());  // per_worker_qps required
}

}  // namespace
}  // namespace sloserve

#include <gtest/gtest.h>

#include <map>

#include "policy/policy_test_util.h"
#include "sloserve/policy/dispatch/central_queue.h"
#include "sloserve/policy/dispatch/join_shortest_queue.h"
#include "sloserve/policy/dispatch/quota.h"
#include "sloserve/policy/dispatch/round_robin.h"
#include "sloserve/policy/dispatch/slo_partition.h"
#include "support/multi_model_suite.h"

namespace sloserve {
namespace {

using testing::MakeWorkers;
using testing::QueueFixture;

TEST(RoundRobinTest, CyclesAndSkipsRetiredWorkers) {
  auto p = RoundRobinDispatch::Create({}).value();
  auto workers = MakeWorkers(3);
  workers[1].active = false;
  QueueFixture q;
  for (int i = 0; i < 5; ++i) q.Add(i, 100);
  std::vector<Assignment> out;
  p->Assign(q.View(), workers, kTimeZero, &out);
  std::vector<WorkerId> got;
  for (const Assignment& a : out) got.push_back(a.worker);
  EXPECT_EQ(got, (std::vector<WorkerId>{0, 2, 0, 2, 0}));
}

// With no active worker (every remote worker marked down) nothing is assigned: an
// assignment to an inactive worker would be rejected and its query dropped as internal.
TEST(RoundRobinTest, AssignsNothingWithoutAnActiveWorker) {
  auto p = RoundRobinDispatch::Create({}).value();
  auto workers = MakeWorkers(2);
  workers[0].active = workers[1].active = false;
  QueueFixture q;
  for (int i = 0; i < 3; ++i) q.Add(i, 100);
  std::vector<Assignment> out;
  p->Assign(q.View(), workers, kTimeZero, &out);
  EXPECT_TRUE(out.empty());
  workers[1].active = true;  // rejoined
  p->Assign(q.View(), workers, kTimeZero, &out);
  std::vector<WorkerId> got;
  for (const Assignment& a : out) got.push_back(a.worker);
  EXPECT_EQ(got, (std::vector<WorkerId>{1, 1, 1}));
}

TEST(JoinShortestQueueTest, PicksFewestOutstandingCountingBusyAndThisCall) {
  auto p = JoinShortestQueueDispatch::Create({}).value();
  auto workers = MakeWorkers(3);
  workers[0].queue_length = 2;
  workers[1].busy = true;       // load 1
  workers[2].queue_length = 0;  // load 0
  QueueFixture q;
  for (int i = 0; i < 4; ++i) q.Add(i, 100);
  std::vector<Assignment> out;
  p->Assign(q.View(), workers, kTimeZero, &out);
  // Loads 2/1/0: the first goes to w2, and the call counts its own assignments, so the
  // four end up levelling the loads: 2+1+0+4 = 7 -> {3,2,2} in some order.
  std::map<WorkerId, int> count;
  for (const Assignment& a : out) ++count[a.worker];
  EXPECT_EQ(out[0].worker, 2u);
  int loads[3] = {2 + count[0], 1 + count[1], 0 + count[2]};
  EXPECT_EQ(*std::max_element(loads, loads + 3) - *std::min_element(loads, loads + 3), 1);
  EXPECT_LE(count[0], 1);
}

// The workers `n` queries dispatched in one call go to, in order.
std::vector<WorkerId> Dispatched(DispatchPolicy& p, const std::vector<WorkerView>& workers, int n) {
  QueueFixture q;
  for (int i = 0; i < n; ++i) q.Add(i, 100);
  std::vector<Assignment> out;
  p.Assign(q.View(), workers, kTimeZero, &out);
  std::vector<WorkerId> got;
  for (const Assignment& a : out) got.push_back(a.worker);
  return got;
}

TEST(QuotaDispatchTest, SmoothWeightedRoundRobinByQuota) {
  auto p = QuotaDispatch::Create({}).value();
  auto workers = MakeWorkers(3);
  workers[0].quota = 30;  // rps, as a planner sets them: only the ratio matters
  workers[1].quota = 10;
  workers[2].quota = 0;  // active but without a quota: nothing while others have one
  // Credits (0,0) -> +(3,1): w0 (-1,1) -> w0 (-2,2) -> w1 (1,-1) -> w0 (0,0): a cycle of 4.
  EXPECT_EQ(Dispatched(*p, workers, 8), (std::vector<WorkerId>{0, 0, 1, 0, 0, 0, 1, 0}));
  // Calls continue the same cycle (one query per call, as arrivals come).
  std::vector<WorkerId> one_by_one;
  for (int i = 0; i < 4; ++i) one_by_one.push_back(Dispatched(*p, workers, 1)[0]);
  EXPECT_EQ(one_by_one, (std::vector<WorkerId>{0, 0, 1, 0}));
}

TEST(QuotaDispatchTest, SharesTrackQuotasAndANewPlanStartsAfresh) {
  auto p = QuotaDispatch::Create({}).value();
  auto workers = MakeWorkers(4);
  const double quotas[4] = {12.5, 50, 25, 12.5};
  for (int w = 0; w < 4; ++w) workers[w].quota = quotas[w];
  std::map<WorkerId, int> count;
  for (WorkerId w : Dispatched(*p, workers, 800)) ++count[w];
  for (int w = 0; w < 4; ++w) EXPECT_EQ(count[w], static_cast<int>(quotas[w] * 8)) << w;
  // A plan moves the load: w1 inactive (draining), w3 takes its share.
  workers[1].active = false;
  workers[3].quota = 62.5;
  count.clear();
  for (WorkerId w : Dispatched(*p, workers, 100)) ++count[w];
  EXPECT_NEAR(count[0], 12.5, 1);  // within one query of the share over any window
  EXPECT_EQ(count[1], 0);
  EXPECT_NEAR(count[2], 25, 1);
  EXPECT_NEAR(count[3], 62.5, 1);
  EXPECT_EQ(count[0] + count[2] + count[3], 100);
}

TEST(QuotaDispatchTest, WithoutQuotasItIsRoundRobinOverActiveWorkers) {
  auto p = QuotaDispatch::Create({}).value();
  auto workers = MakeWorkers(3);
  workers[1].active = false;
  workers[1].quota = 5;  // inactive: its quota does not count
  EXPECT_EQ(Dispatched(*p, workers, 4), (std::vector<WorkerId>{0, 2, 0, 2}));
  for (WorkerView& w : workers) w.active = false;
  EXPECT_TRUE(Dispatched(*p, workers, 2).empty());  // nobody active: they stay central
}

// Two models on one pool: `image` on w0, w1 (quotas 3:1), `text` on w2, w3 (1:1); each
// model's queries go to its workers by their quotas among them.
TEST(QuotaDispatchTest, EachModelSharesItsQueriesAmongItsWorkersByTheirQuotas) {
  const ProfileSuite suite = testing::MultiModelSuite();
  const TaskId image = 0, text = 1;
  auto p = QuotaDispatch::Create({}).value();
  auto workers = MakeWorkers(4, suite.variants().size());
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.workers = workers;
  ASSERT_TRUE(p->Init(ctx).ok());
  const double quota[4] = {0.75, 0.25, 0.5, 0.5};
  const TaskId model[4] = {image, image, text, text};
  for (size_t w = 0; w < 4; ++w) {
    workers[w].quota = quota[w];
    workers[w].model = model[w];
  }
  QueueFixture q;
  for (int i = 0; i < 40; ++i) {
    q.Add(i, 100);
    q.table.back().task = i % 2 == 0 ? image : text;
  }
  std::vector<Assignment> out;
  p->Assign(q.View(), workers, kTimeZero, &out);
  ASSERT_EQ(out.size(), 40u);
  std::map<WorkerId, int> count;
  for (const Assignment& a : out) {
    EXPECT_EQ(workers[a.worker].model, q.View().at(a.position).task) << a.position;
    ++count[a.worker];
  }
  EXPECT_EQ(count, (std::map<WorkerId, int>{{0, 15}, {1, 5}, {2, 10}, {3, 10}}));
  // Without the model's workers active its queries stay central; the other's still go.
  workers[2].active = workers[3].active = false;
  out.clear();
  p->Assign(q.View(), workers, kTimeZero, &out);
  ASSERT_EQ(out.size(), 20u);
  for (const Assignment& a : out) EXPECT_EQ(q.View().at(a.position).task, image);
}

TEST(CentralQueueTest, OnlyIdleEmptyActiveWorkersGrabInDeadlineOrder) {
  auto p = CentralQueueDispatch::Create(PolicyParams("t", {{"central_batch", "2"}})).value();
  auto workers = MakeWorkers(4);
  workers[0].busy = true;
  workers[1].queue_length = 1;
  workers[3].active = false;
  QueueFixture q;
  q.Add(0, 300);
  q.Add(1, 100);  // earliest deadline
  q.Add(2, 200);
  std::vector<Assignment> out;
  p->Assign(q.View(), workers, kTimeZero, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].worker, 2u);
  EXPECT_EQ(q.View().at(out[0].position).id, 2u);
  EXPECT_EQ(q.View().at(out[1].position).id, 3u);
  EXPECT_FALSE(CentralQueueDispatch::Create(PolicyParams("t", {{"central_batch", "0"}})).ok());
}

std::unique_ptr<DispatchPolicy> SloPartition(const std::string& spec, int workers) {
  auto p = SloPartitionDispatch::Create(PolicyParams("t", {{"slo_workers", spec}})).value();
  PolicyContext ctx;
  ctx.workers = MakeWorkers(workers);
  EXPECT_TRUE(p->Init(ctx).ok());
  return p;
}

// Where the queries of `slos` (ms, all arriving at 0) go, in queue order.
std::vector<WorkerId> Targets(DispatchPolicy& p, const std::vector<WorkerView>& workers,
                              const std::vector<int64_t>& slos) {
  QueueFixture q;
  for (int64_t slo : slos) q.Add(0, slo);
  std::vector<Assignment> out;
  p.Assign(q.View(), workers, kTimeZero, &out);
  std::vector<WorkerId> got(slos.size(), kNoId);
  for (const Assignment& a : out) got[q.View().at(a.position).id - 1] = a.worker;
  return got;
}

TEST(SloPartitionTest, RoundRobinWithinTheNearestClass) {
  auto p = SloPartition("150:2,300:2", 4);
  auto workers = MakeWorkers(4);
  // Assigned in deadline order: 140 (-> 0), 150 (1), 150 (0); 290 (2), 300 (3), 1000 (2).
  EXPECT_EQ(Targets(*p, workers, {150, 300, 140, 290, 150, 1000}),
            (std::vector<WorkerId>{1, 3, 0, 2, 0, 2}));
  workers[1].active = false;  // skipped
  EXPECT_EQ(Targets(*p, workers, {150, 150}), (std::vector<WorkerId>{0, 0}));
  EXPECT_FALSE(SloPartitionDispatch::Create(PolicyParams("t", {})).ok());
}

TEST(SloPartitionTest, WorkersAddedAfterInitJoinTheFirstClass) {
  auto p = SloPartition("150:2,300:2", 4);
  auto workers = MakeWorkers(4);
  workers.push_back(testing::AddedWorker(workers[0], 4 + 3));  // id n+3
  EXPECT_EQ(Targets(*p, workers, {150, 150, 150, 300, 300, 300}),
            (std::vector<WorkerId>{0, 1, 7, 2, 3, 2}));
}

TEST(SloPartitionTest, AnInactiveClassFallsBackToTheNearestActiveOne) {
  auto p = SloPartition("100:1,150:2,400:1", 4);
  auto workers = MakeWorkers(4);
  workers[3].active = false;  // the whole 400 ms class
  workers[3].phase = WorkerPhase::kDraining;
  // 400 ms queries go to the 150 ms class (nearer than 100 ms), in its turn: in deadline
  // order the 150 ms query takes worker 1, then the two 400 ms ones 2 and 1.
  EXPECT_EQ(Targets(*p, workers, {400, 150, 400}), (std::vector<WorkerId>{2, 1, 1}));
  for (WorkerView& w : workers) w.active = false;
  EXPECT_EQ(Targets(*p, workers, {400, 100}), (std::vector<WorkerId>{kNoId, kNoId}));  // stay
}

TEST(SloPartitionTest, IdsNeedNotBePositions) {
  auto p = SloPartition("150:2,300:2", 4);
  auto workers = MakeWorkers(4);
  workers.erase(workers.begin() + 1);  // worker 1 is not in this view at all
  EXPECT_EQ(Targets(*p, workers, {150, 150, 300}), (std::vector<WorkerId>{0, 0, 2}));
}

}  // namespace
}  // namespace sloserve

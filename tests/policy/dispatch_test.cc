#include <gtest/gtest.h>

#include <map>

#include "policy/policy_test_util.h"
#include "sloserve/policy/dispatch/central_queue.h"
#include "sloserve/policy/dispatch/join_shortest_queue.h"
#include "sloserve/policy/dispatch/round_robin.h"
#include "sloserve/policy/dispatch/slo_partition.h"

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

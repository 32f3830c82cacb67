#include <gtest/gtest.h>

#include <map>

#include "policy/policy_test_util.h"
#include "sloserve/policy/dispatch/central_queue.h"
#include "sloserve/policy/dispatch/join_shortest_queue.h"
#include "sloserve/policy/dispatch/round_robin.h"

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

}  // namespace
}  // namespace sloserve

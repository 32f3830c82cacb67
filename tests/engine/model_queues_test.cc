#include "sloserve/engine/model_queues.h"

#include <gtest/gtest.h>

#include <vector>

namespace sloserve {
namespace {

struct Table {
  std::vector<Query> queries;
  // A query of `task` due at `due_ms`; returns its slot (= id - 1).
  uint32_t Add(TaskId task, int64_t due_ms) {
    Query q;
    q.id = queries.size() + 1;
    q.task = task;
    q.deadline = kTimeZero + Millis(due_ms);
    queries.push_back(q);
    return static_cast<uint32_t>(queries.size() - 1);
  }
};

std::vector<QueryId> Ids(const ModelQueues::Queue& q, const Table& t) {
  std::vector<QueryId> ids;
  for (uint32_t s : q.slots) ids.push_back(t.queries[s].id);
  return ids;
}

TEST(ModelQueuesTest, EachModelHasItsOwnDeadlineOrderedQueue) {
  Table t;
  ModelQueues mq;
  for (auto [task, due] :
       std::vector<std::pair<TaskId, int64_t>>{{0, 50}, {1, 20}, {0, 30}, {1, 40}, {0, 30}})
    mq.Insert(t.Add(task, due), t.queries, /*check_ids=*/true);
  EXPECT_EQ(mq.size(), 5u);
  ASSERT_NE(mq.Find(0), nullptr);
  ASSERT_NE(mq.Find(1), nullptr);
  EXPECT_EQ(mq.Find(2), nullptr);
  EXPECT_EQ(Ids(*mq.Find(0), t), (std::vector<QueryId>{3, 5, 1}));  // (deadline, id)
  EXPECT_EQ(Ids(*mq.Find(1), t), (std::vector<QueryId>{2, 4}));
  EXPECT_FALSE(mq.Find(0)->arrival_ordered);  // 3 went before 1
  EXPECT_TRUE(mq.Find(1)->arrival_ordered);

  // Unpartitioned: one queue of every model.
  ModelQueues all(/*by_model=*/false);
  for (uint32_t s = 0; s < t.queries.size(); ++s) all.Insert(s, t.queries, false);
  EXPECT_EQ(Ids(all.All(), t), (std::vector<QueryId>{2, 3, 5, 4, 1}));
}

TEST(ModelQueuesTest, EarliestHeadAcrossModelsSkippingDeclinedPinnedAndUnservable) {
  Table t;
  ModelQueues mq;
  mq.Insert(t.Add(0, 50), t.queries, true);
  mq.Insert(t.Add(1, 20), t.queries, true);
  mq.Insert(t.Add(2, 30), t.queries, true);
  mq.Insert(t.Add(1, 60), t.queries, true);
  EXPECT_EQ(mq.Earliest(t.queries, kNoId, 1)->task, 1u);
  mq.Find(1)->declined = 7;  // model 1 declined in round 7
  EXPECT_EQ(mq.Earliest(t.queries, kNoId, 7)->task, 2u);
  EXPECT_EQ(mq.Earliest(t.queries, kNoId, 8)->task, 1u);  // a new round asks it again
  EXPECT_EQ(mq.Earliest(t.queries, 0, 8)->task, 0u);      // pinned to model 0
  EXPECT_EQ(mq.Earliest(t.queries, 3, 8), nullptr);
  const uint8_t servable[] = {1, 0, 1};
  EXPECT_EQ(mq.Earliest(t.queries, kNoId, 8, servable)->task, 2u);
  // Ties on the deadline go to the lower id.
  mq.Insert(t.Add(0, 20), t.queries, true);
  EXPECT_EQ(mq.Earliest(t.queries, kNoId, 8)->task, 1u);
}

TEST(ModelQueuesTest, RemovePopAndEraseKeepTheCount) {
  Table t;
  ModelQueues mq;
  for (int i = 0; i < 6; ++i) mq.Insert(t.Add(i % 2, 10 * i), t.queries, true);
  std::vector<uint32_t> removed;
  mq.Remove(*mq.Find(0), {0, 2}, &removed);  // ids 1 and 5 of model 0 (ids 1, 3, 5)
  EXPECT_EQ(removed, (std::vector<uint32_t>{0, 4}));
  EXPECT_EQ(mq.size(), 4u);
  EXPECT_EQ(mq.PopFront(*mq.Find(1)), 1u);  // id 2
  uint32_t slot = 0;
  EXPECT_TRUE(mq.Erase(6, t.queries, &slot));
  EXPECT_EQ(slot, 5u);
  EXPECT_FALSE(mq.Erase(6, t.queries, &slot));
  EXPECT_EQ(mq.size(), 2u);
  std::vector<uint32_t> rest;
  mq.TakeAll(&rest);
  EXPECT_EQ(rest.size(), 2u);
  EXPECT_TRUE(mq.empty());
  EXPECT_EQ(mq.Earliest(t.queries, kNoId, 1), nullptr);
}

TEST(ModelQueuesTest, QueuesAreReusedSoMemoryFollowsTheQueriesWaitingNotTheModels) {
  Table t;
  ModelQueues mq;
  // A thousand models, one after another: two queues serve them all (an emptied queue
  // goes back to the free list at the next scan, after the next model's insertion).
  for (TaskId m = 0; m < 1000; ++m) {
    mq.Insert(t.Add(m, m), t.queries, true);
    ModelQueues::Queue* q = mq.Earliest(t.queries, kNoId, 1);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->task, m);
    mq.PopFront(*q);
  }
  EXPECT_EQ(mq.Earliest(t.queries, kNoId, 1), nullptr);
  EXPECT_EQ(mq.queues_made(), 2u);
  // Three waiting at once need three, besides the last model's queue (kept while it is
  // the only one: a single model does not give its queue back each time it empties).
  for (TaskId m = 0; m < 3; ++m) mq.Insert(t.Add(m, 5), t.queries, true);
  EXPECT_EQ(mq.queues_made(), 4u);
  EXPECT_TRUE(mq.Find(0)->arrival_ordered);  // a reused queue starts afresh
}

}  // namespace
}  // namespace sloserve

#include <gtest/gtest.h>

#include "policy/policy_test_util.h"
#include "sloserve/policy/batching/edf.h"
#include "sloserve/policy/selection/fixed.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

using testing::QueueFixture;

std::unique_ptr<BatchingPolicy> Make(const ProfileSuite& suite, bool fifo,
                                     std::map<std::string, std::string> opts) {
  PolicyParams params("t", std::move(opts));
  auto sel = FixedSelection::Create(params).value();
  auto b = EdfBatching::Create(params, std::move(sel), fifo).value();
  PolicyContext ctx;
  ctx.suite = &suite;
  EXPECT_TRUE(b->Init(ctx).ok());
  return b;
}

TEST(FixedSelectionTest, DefaultsToMostAccurateAndCapsBatch) {
  ProfileSuite suite = testing::SmallSuite();
  auto b = Make(suite, false, {{"max_batch", "3"}});
  QueueFixture q;
  for (int i = 0; i < 5; ++i) q.Add(i, 100);
  WorkerView w;
  BatchDecision d;
  b->NextBatch(w, q.View(), kTimeZero, &d);
  ASSERT_EQ(d.kind, BatchDecision::Kind::kRun);
  EXPECT_EQ(suite.variants()[d.variant].name, "slow");  // 80% beats 70%
  EXPECT_EQ(d.take, (std::vector<uint32_t>{0, 1, 2}));
}

TEST(EdfBatchingTest, TakesEarliestDeadlinesAndRespectsRows) {
  ProfileSuite suite = testing::SmallSuite(4);
  auto b = Make(suite, false, {{"variant", "fast"}});
  QueueFixture q;
  q.Add(0, 500, 2);  // deadline 500
  q.Add(1, 50, 1);   // deadline 51: first
  q.Add(2, 90, 2);   // deadline 92: second
  q.Add(3, 60, 1);   // deadline 63
  WorkerView w;
  BatchDecision d;
  b->NextBatch(w, q.View(), kTimeZero, &d);
  ASSERT_EQ(d.kind, BatchDecision::Kind::kRun);
  // EDF order: ids 2 (51), 4 (63), 3 (92) -> rows 1+1+2 = 4 = max batch.
  std::vector<QueryId> ids;
  for (uint32_t p : d.take) ids.push_back(q.View().at(p).id);
  EXPECT_EQ(ids, (std::vector<QueryId>{2, 4, 3}));
}

TEST(EdfBatchingTest, FifoDiffersFromEdfWithMixedSlos) {
  ProfileSuite suite = testing::SmallSuite(2);
  auto fifo = Make(suite, true, {{"variant", "fast"}});
  QueueFixture q;
  q.Add(0, 500);
  q.Add(1, 400);
  q.Add(2, 10);
  ASSERT_FALSE(q.View().arrival_ordered());
  WorkerView w;
  BatchDecision d;
  fifo->NextBatch(w, q.View(), kTimeZero, &d);
  std::vector<QueryId> ids;
  for (uint32_t p : d.take) ids.push_back(q.View().at(p).id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<QueryId>{1, 2}));  // the two oldest, not the tightest deadline
}

TEST(EdfBatchingTest, DropExpiredAndOversizedQueriesAreReportedNotServed) {
  ProfileSuite suite = testing::SmallSuite(4);
  auto b = Make(suite, false, {{"variant", "fast"}, {"drop_expired", "true"}});
  QueueFixture q;
  q.Add(0, 5);       // expired at t=10 ms
  q.Add(1, 100, 9);  // larger than any batch (4 rows)
  q.Add(2, 200);
  WorkerView w;
  BatchDecision d;
  b->NextBatch(w, q.View(), kTimeZero + Millis(10), &d);
  ASSERT_EQ(d.kind, BatchDecision::Kind::kRun);
  ASSERT_EQ(d.take.size(), 1u);
  EXPECT_EQ(q.View().at(d.take[0]).id, 3u);
  ASSERT_EQ(d.drop.size(), 1u);
  EXPECT_EQ(q.View().at(d.drop[0]).id, 1u);  // expired: dropped by policy
  ASSERT_EQ(d.reject.size(), 1u);
  EXPECT_EQ(q.View().at(d.reject[0]).id, 2u);  // 9 rows > 4: unservable
  // FIFO with mixed SLOs rejects an oversized query the same way.
  auto fifo = Make(suite, true, {{"variant", "fast"}});
  QueueFixture q2;
  q2.Add(0, 300, 9);
  q2.Add(1, 100);
  ASSERT_FALSE(q2.View().arrival_ordered());
  BatchDecision d2;
  fifo->NextBatch(w, q2.View(), kTimeZero, &d2);
  ASSERT_EQ(d2.kind, BatchDecision::Kind::kRun);
  ASSERT_EQ(d2.reject.size(), 1u);
  EXPECT_EQ(q2.View().at(d2.reject[0]).id, 1u);
  EXPECT_EQ(q2.View().at(d2.take[0]).id, 2u);
}

}  // namespace
}  // namespace sloserve

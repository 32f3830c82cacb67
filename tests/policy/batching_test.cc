#include <gtest/gtest.h>

#include "policy/policy_test_util.h"
#include "sloserve/policy/registry.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

using testing::QueueFixture;

std::unique_ptr<BatchingPolicy> Make(const ProfileSuite& suite, bool fifo,
                                     std::map<std::string, std::string> opts) {
  PolicyParams params("t", std::move(opts));
  // By name, as configs build them: the selection wrapped to fit multi-row requests.
  const PolicyRegistry& registry = PolicyRegistry::Builtin();
  auto sel = registry.MakeSelection("fixed", params).value();
  auto b = registry.MakeBatching(fifo ? "fifo" : "edf", params, std::move(sel)).value();
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
  ASSERT_EQ(d.drop.size(), 1u);
  EXPECT_EQ(q.View().at(d.drop[0]).id, 1u);  // expired: dropped by policy
  ASSERT_EQ(d.reject.size(), 1u);
  EXPECT_EQ(q.View().at(d.reject[0]).id, 2u);  // 9 rows, no variant profiled past 4
  EXPECT_TRUE(d.take.empty());                 // the next decision serves the rest
  // FIFO with mixed SLOs rejects an oversized head the same way.
  auto fifo = Make(suite, true, {{"variant", "fast"}});
  QueueFixture q2;
  q2.Add(0, 300, 9);
  q2.Add(1, 100);
  ASSERT_FALSE(q2.View().arrival_ordered());
  BatchDecision d2;
  fifo->NextBatch(w, q2.View(), kTimeZero, &d2);
  ASSERT_EQ(d2.reject.size(), 1u);
  EXPECT_EQ(q2.View().at(d2.reject[0]).id, 1u);
  EXPECT_TRUE(d2.take.empty());
}

// A multi-row request is served whole (docs/protocol.md, "Batched requests"): behind the
// head it waits rather than being refused, and as the head it gets a batch that holds
// it, on the chosen variant when that takes its rows within its SLO, else on the most
// accurate variant that does.
TEST(EdfBatchingTest, MultiRowRequestsGetABatchThatHoldsThem) {
  ProfileSuite suite = testing::SmallSuite(16);       // 100 ms: fast takes 16 rows, slow 15
  auto b = Make(suite, false, {{"max_batch", "2"}});  // fixed: slow, batches of 2
  QueueFixture q;
  q.Add(0, 50);     // id 1
  q.Add(0, 60, 4);  // id 2: 4 rows, more than the selection's batch of 2
  q.Add(0, 70);     // id 3
  WorkerView w;
  BatchDecision d;
  b->NextBatch(w, q.View(), kTimeZero, &d);
  ASSERT_EQ(d.kind, BatchDecision::Kind::kRun);
  EXPECT_EQ(suite.variants()[d.variant].name, "slow");
  std::vector<QueryId> ids;
  for (uint32_t p : d.take) ids.push_back(q.View().at(p).id);
  EXPECT_EQ(ids, (std::vector<QueryId>{1, 3}));
  EXPECT_TRUE(d.reject.empty());  // the 4-row request waits for its own batch

  QueueFixture four;  // as the head: slow takes 4 rows in 45 ms, within its 100 ms
  four.Add(0, 100, 4);
  b->NextBatch(w, four.View(), kTimeZero, &d);
  ASSERT_EQ(d.kind, BatchDecision::Kind::kRun);
  EXPECT_EQ(suite.variants()[d.variant].name, "slow");
  EXPECT_EQ(d.take, (std::vector<uint32_t>{0}));

  QueueFixture sixteen;  // slow needs 105 ms for 16 rows: the most accurate that fits
  sixteen.Add(0, 100, 16);
  b->NextBatch(w, sixteen.View(), kTimeZero, &d);
  ASSERT_EQ(d.kind, BatchDecision::Kind::kRun);
  EXPECT_EQ(suite.variants()[d.variant].name, "fast");
  EXPECT_EQ(d.take, (std::vector<uint32_t>{0}));

  QueueFixture tight;  // within 20 ms only fast takes 4 rows (16 ms); slow takes none
  tight.Add(0, 20, 4);
  b->NextBatch(w, tight.View(), kTimeZero, &d);
  ASSERT_EQ(d.kind, BatchDecision::Kind::kRun);
  EXPECT_EQ(suite.variants()[d.variant].name, "fast");

  QueueFixture none;  // no variant takes 17 rows: refused as unservable
  none.Add(0, 100, 17);
  b->NextBatch(w, none.View(), kTimeZero, &d);
  EXPECT_EQ(d.kind, BatchDecision::Kind::kIdle);
  EXPECT_EQ(d.reject, (std::vector<uint32_t>{0}));
}

}  // namespace
}  // namespace sloserve

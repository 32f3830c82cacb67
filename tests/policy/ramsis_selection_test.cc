#include "sloserve/policy/selection/ramsis.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "policy/policy_test_util.h"
#include "sloserve/profile/profile.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

using testing::MakeWorkers;
using testing::QueueFixture;

TEST(RamsisSelectionTest, GeneratesAPolicyOffTheDecisionPathWhenNoneCoversTheLoad) {
  static const ProfileSuite* suite = new ProfileSuite(LoadSuite("ramsis-image").value());
  const testing::ScopedTempDir temp("ramsis-selection");
  const std::string cache = temp.File("cache");
  PolicyParams params("t", {{"min_qps", "50"},
                            {"max_qps", "100"},
                            {"d", "20"},
                            {"max_queue", "8"},
                            {"variants", "shufflenet_v2_x0_5,efficientnet_b2"},
                            {"cache_dir", cache}});
  auto created = RamsisSelection::Create(params);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto* ramsis = static_cast<RamsisSelection*>(created->get());
  PolicyContext ctx;
  ctx.suite = suite;
  ctx.workers = MakeWorkers(10, suite->variants().size());
  ctx.slo = Millis(150);
  std::vector<std::function<void()>> offline;  // the test decides when offline work runs
  ctx.run_offline = [&](std::function<void()> work) { offline.push_back(std::move(work)); };
  ASSERT_TRUE(ramsis->Init(ctx).ok());
  const size_t initial = ramsis->policies().size();
  ASSERT_GE(initial, 1u);
  EXPECT_LE(ramsis->policies().back().load_qps(), 100.0 + 1e-9);

  // 400 qps for a second: beyond every policy.
  TimePoint t = kTimeZero;
  for (int i = 0; i < 400; ++i) ramsis->OnArrival(Query{}, t += Micros(2500));
  QueueFixture q;
  q.Add(0, 150);
  SelectionDecision first = ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
  EXPECT_EQ(suite->variants()[first.variant].name, "shufflenet_v2_x0_5");  // fastest meanwhile
  ASSERT_EQ(offline.size(), 1u);  // one generation requested ...
  ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
  EXPECT_EQ(offline.size(), 1u);  // ... and not twice while in flight
  offline[0]();                   // the background work finishes
  ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
  ASSERT_EQ(ramsis->policies().size(), initial + 1);
  EXPECT_GE(ramsis->policies().back().load_qps(), 400.0);
}

}  // namespace
}  // namespace sloserve

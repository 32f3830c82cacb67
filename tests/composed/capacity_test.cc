// The composed planner's candidates: a worker's capacity is the best b / L_q(b) within
// slo_fraction * SLO; one candidate per profiled (model, variant, hardware) with a
// feasible batch, carrying accuracy, price, memory and load time.
#include "sloserve/composed/capacity.h"

#include <gtest/gtest.h>

#include "support/multi_model_suite.h"

namespace sloserve {
namespace {

TEST(ComposedCapacityTest, BestThroughputWithinTheSloFraction) {
  const ProfileSuite s = testing::MultiModelSuite();
  // img_fast: 10 ms + 2 ms per extra row. SLO 100 ms, fraction 0.5: every batch up to 8
  // (24 ms) fits; the best is 8 / 24 ms.
  EXPECT_NEAR(ComposedWorkerCapacity(s, 0, 0, Millis(100), {}), 8 / 0.024, 1e-6);
  // txt_only: 200 ms + 10 ms per row, SLO 400 ms x 0.5 = 200 ms: only batch 1 fits.
  EXPECT_NEAR(ComposedWorkerCapacity(s, 0, 2, Millis(400), {}), 1 / 0.2, 1e-6);
  // Fraction 0.2 of 100 ms = 20 ms: img_fast up to batch 6 (20 ms), img_slow none.
  ComposedCapacityOptions tight;
  tight.slo_fraction = 0.2;
  EXPECT_NEAR(ComposedWorkerCapacity(s, 0, 0, Millis(100), tight), 6 / 0.02, 1e-6);
  EXPECT_EQ(ComposedWorkerCapacity(s, 0, 1, Millis(100), tight), 0);
}

TEST(ComposedCapacityTest, OneCandidatePerFeasibleVariantAndType) {
  const ProfileSuite s = testing::MultiModelSuite();
  ComposedCapacityOptions tight;
  tight.slo_fraction = 0.2;
  auto c = BuildComposedCandidates(s, {Millis(100), Millis(1000)}, tight);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->size(), 2u);  // img_slow has no feasible batch at 20 ms
  EXPECT_EQ((*c)[0].variant, 0u);
  EXPECT_EQ((*c)[0].model, 0u);
  EXPECT_EQ((*c)[0].name, "img_fast@hw");
  EXPECT_DOUBLE_EQ((*c)[0].accuracy, 70.0);
  EXPECT_DOUBLE_EQ((*c)[0].price_per_hour, 1.0);
  EXPECT_EQ((*c)[1].model, 1u);
  EXPECT_EQ((*c)[1].current, 0);
}

TEST(ComposedCapacityTest, AVariantLargerThanTheMachineHasNoCandidate) {
  ProfileSuite s = testing::MultiModelSuite();
  HardwareSpec small{"small", 0.5, 2, 1};  // 1 GB
  const HardwareId h = s.AddHardware(small);
  const VariantId big = s.AddVariant(VariantSpec{"img_huge", 0, 95.0, 2048, Duration(0)});
  for (int b = 1; b <= 2; ++b) {
    s.AddLatency(h, 0, b, LatencyDistribution(std::vector<int64_t>(3, 10000)));
    s.AddLatency(h, big, b, LatencyDistribution(std::vector<int64_t>(3, 10000)));
  }
  auto c = BuildComposedCandidates(s, {Millis(100), Millis(400)});
  ASSERT_TRUE(c.ok());
  bool fast_on_small = false;
  for (const ComposedCandidate& x : *c) {
    EXPECT_NE(x.variant, big);  // 2 GB on a 1 GB machine
    fast_on_small = fast_on_small || (x.variant == 0 && x.hardware == h);
  }
  EXPECT_TRUE(fast_on_small);
}

TEST(ComposedCapacityTest, RefusesBadInput) {
  const ProfileSuite s = testing::MultiModelSuite();
  EXPECT_FALSE(BuildComposedCandidates(s, {Millis(100)}).ok());  // one SLO per model
  EXPECT_FALSE(BuildComposedCandidates(s, {Millis(100), Duration(0)}).ok());
  ComposedCapacityOptions bad;
  bad.slo_fraction = 0;
  EXPECT_FALSE(BuildComposedCandidates(s, {Millis(100), Millis(400)}, bad).ok());
}

}  // namespace
}  // namespace sloserve

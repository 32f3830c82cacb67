// The composed planner's candidates: a worker's capacity is the best b / L_q(b) within
// slo_fraction * SLO, or InfAdapter's fitted line where the suite has capacity records
// (core counts as hardware types); one candidate per profiled (model, variant, hardware)
// with a feasible batch, carrying accuracy, price, memory and load time.
#include "sloserve/composed/capacity.h"

#include <gtest/gtest.h>

#include "sloserve/infadapter/capacity.h"
#include "support/multi_model_suite.h"
#include "support/test_suite.h"

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

// Capacity records at the SLO (InfAdapter's): the line fitted on the records at 1, 2
// and 4 cores (8 and 16 have none), read at each type's cores, where that type's own
// record has its p99 within the SLO; at an SLO without records, the latency-based
// capacity.
TEST(ComposedCapacityTest, CapacityRecordsGiveInfAdaptersFittedLine) {
  ProfileSuite s;
  TaskSpec img;
  img.name = "img";
  img.default_slo = Millis(750);
  const TaskId t = s.AddTask(img);
  const VariantId v = s.AddVariant(VariantSpec{"resnet", t, 76.0, 1024, Seconds(6)});
  struct Row {
    int cores;
    double rps;
    int p99_ms;
  };
  std::vector<HardwareId> hw;
  for (const Row& r : {Row{1, 10, 500}, Row{2, 19, 600}, Row{4, 41, 800}}) {
    hw.push_back(
        s.AddHardware(HardwareSpec{"cpu-" + std::to_string(r.cores) + "c", 0, r.cores, 0}));
    CapacityPoint p;
    p.hardware = hw.back();
    p.variant = v;
    p.slo = Millis(750);
    p.p99 = Millis(r.p99_ms);
    p.capacity_rps = r.rps;
    s.AddCapacityPoint(p);
    s.AddLatency(hw.back(), v, 1, LatencyDistribution(std::vector<int64_t>(3, 100'000)));
  }
  // Least squares through (1, 10), (2, 19), (4, 41): slope 438/42, intercept -1.
  const double slope = 438.0 / 42.0, intercept = -1.0;
  EXPECT_NEAR(ComposedWorkerCapacity(s, hw[0], v, Millis(750), {}), intercept + slope, 1e-9);
  EXPECT_NEAR(ComposedWorkerCapacity(s, hw[1], v, Millis(750), {}), intercept + 2 * slope, 1e-9);
  EXPECT_EQ(ComposedWorkerCapacity(s, hw[2], v, Millis(750), {}), 0);  // p99 800 > 750 ms
  // No records at 300 ms: 1 / 100 ms, the batch-1 latency within 0.5 x 300 ms.
  EXPECT_NEAR(ComposedWorkerCapacity(s, hw[2], v, Millis(300), {}), 10, 1e-9);
  auto c = BuildComposedCandidates(s, {Millis(750)});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->size(), 2u);  // cpu-4c has no column
  EXPECT_EQ((*c)[1].name, "resnet@cpu-2c");
}

// On the committed infadapter-resnet suite the composed capacity is InfAdapter's own
// (infadapter/capacity.h) before its headroom, and feasible at the same core counts.
TEST(ComposedCapacityTest, InfAdapterSuiteAgreesWithInfAdaptersCapacityModel) {
  const ProfileSuite& s = testing::EmbeddedSuite("infadapter-resnet");
  auto model = BuildInfAdapterCapacity(s, {});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  int feasible = 0;
  for (const InfAdapterVariantCapacity& vc : model->variants) {
    for (HardwareId h = 0; h < s.hardware().size(); ++h) {
      const int cores = s.hardware()[h].cores;
      const double ours = ComposedWorkerCapacity(s, h, vc.variant, Millis(750), {});
      SCOPED_TRACE(vc.name + " at " + std::to_string(cores) + " cores");
      if (vc.Feasible(cores, Millis(750))) {
        ++feasible;
        EXPECT_NEAR(ours, vc.Throughput(cores) / vc.headroom, 1e-9);
      } else {
        EXPECT_EQ(ours, 0);
      }
    }
  }
  EXPECT_GT(feasible, 50);  // of 5 variants x 20 core counts
}

}  // namespace
}  // namespace sloserve

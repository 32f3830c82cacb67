#include "sloserve/profile/latency_distribution.h"

#include <gtest/gtest.h>

#include <map>

namespace sloserve {
namespace {

// Given unsorted on purpose: the distribution sorts, but keeps the measurement order too.
LatencyDistribution Five() {
  return LatencyDistribution({800, 100, 1600, 200, 400});
}

TEST(LatencyDistributionTest, KeepsOrderAndSorts) {
  LatencyDistribution d = Five();
  EXPECT_EQ(d.size(), 5u);
  EXPECT_EQ(d.samples_us(), (std::vector<int64_t>{800, 100, 1600, 200, 400}));
  EXPECT_EQ(d.sorted_samples_us(), (std::vector<int64_t>{100, 200, 400, 800, 1600}));
  EXPECT_EQ(d.Min(), Micros(100));
  EXPECT_EQ(d.Max(), Micros(1600));
  EXPECT_EQ(d.Mean(), Micros(620));
}

// Expected values are numpy.quantile([100, 200, 400, 800, 1600], q) (linear method).
TEST(LatencyDistributionTest, QuantileMatchesNumpyLinear) {
  LatencyDistribution d = Five();
  EXPECT_EQ(d.Quantile(0.0), Micros(100));
  EXPECT_EQ(d.Quantile(0.25), Micros(200));  // h = 1
  EXPECT_EQ(d.Quantile(0.3), Micros(240));   // h = 1.2: 200 + 0.2 * 200
  EXPECT_EQ(d.Quantile(0.5), Micros(400));
  EXPECT_EQ(d.Quantile(0.95), Micros(1440));  // h = 3.8: 800 + 0.8 * 800
  EXPECT_EQ(d.Quantile(1.0), Micros(1600));
  EXPECT_EQ(d.Quantile(1.5), Micros(1600));  // clamped
  EXPECT_EQ(LatencyDistribution({7}).Quantile(0.95), Micros(7));
  EXPECT_EQ(LatencyDistribution().Quantile(0.5), Micros(0));
}

TEST(LatencyDistributionTest, Cdf) {
  LatencyDistribution d = Five();
  EXPECT_DOUBLE_EQ(d.Cdf(Micros(99)), 0.0);
  EXPECT_DOUBLE_EQ(d.Cdf(Micros(100)), 0.2);
  EXPECT_DOUBLE_EQ(d.Cdf(Micros(399)), 0.4);
  EXPECT_DOUBLE_EQ(d.Cdf(Micros(400)), 0.6);
  EXPECT_DOUBLE_EQ(d.Cdf(Micros(1600)), 1.0);
  EXPECT_DOUBLE_EQ(LatencyDistribution().Cdf(Micros(5)), 0.0);
}

TEST(LatencyDistributionTest, SampleIsUniformOverSamples) {
  LatencyDistribution d = Five();
  Rng rng = MakeRng(42, "latency_distribution_test");
  std::map<int64_t, int> counts;
  constexpr int kDraws = 50000;
  for (int i = 0; i < kDraws; ++i) ++counts[d.Sample(rng).count()];
  ASSERT_EQ(counts.size(), 5u);
  for (const auto& [value, n] : counts) {
    EXPECT_NEAR(static_cast<double>(n) / kDraws, 0.2, 0.01) << value;
  }
  // Same seed, same stream: same draws.
  Rng a = MakeRng(7, "s"), b = MakeRng(7, "s");
  for (int i = 0; i < 100; ++i) EXPECT_EQ(d.Sample(a), d.Sample(b));
}

}  // namespace
}  // namespace sloserve

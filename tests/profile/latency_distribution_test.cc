#include "sloserve/profile/latency_distribution.h"

#include <gtest/gtest.h>

#include "profile/profile_test_data.h"

#include <algorithm>
#include <map>
#include <random>

using sloserve::profile_test_data::ToVector;

namespace sloserve {
namespace {

// Given unsorted on purpose: the distribution sorts, but keeps the measurement order too.
LatencyDistribution Five() {
  return LatencyDistribution({800, 100, 1600, 200, 400});
}

TEST(LatencyDistributionTest, KeepsOrderAndSorts) {
  LatencyDistribution d = Five();
  EXPECT_EQ(d.size(), 5u);
  EXPECT_EQ(ToVector(d.samples_us()), (std::vector<int64_t>{800, 100, 1600, 200, 400}));
  EXPECT_EQ(ToVector(d.sorted_samples_us()), (std::vector<int64_t>{100, 200, 400, 800, 1600}));
  EXPECT_EQ(d.Min(), Micros(100));
  EXPECT_EQ(d.Max(), Micros(1600));
  EXPECT_EQ(d.Mean(), Micros(620));
}

// Long lists take the radix sort (non-negative, below 2^33), others std::sort; every path
// must give std::sort's order and the exactly rounded mean. Values span 1, 2 and 3 radix
// digits, plus negatives and one value past the radix range.
TEST(LatencyDistributionTest, LongListsSortLikeStdSort) {
  std::mt19937_64 rng(7);
  for (int64_t max_us :
       {int64_t{1000}, int64_t{3'000'000}, int64_t{8'000'000'000}, int64_t{1} << 40}) {
    for (int64_t min_us : {int64_t{0}, int64_t{-5000}}) {
      std::uniform_int_distribution<int64_t> pick(min_us, max_us);
      std::vector<int64_t> samples(3000);
      for (int64_t& x : samples) x = pick(rng);
      std::vector<int64_t> want = samples;
      std::sort(want.begin(), want.end());
      long double sum = 0;
      for (int64_t x : samples) sum += static_cast<long double>(x);
      const LatencyDistribution d(samples);
      EXPECT_EQ(ToVector(d.samples_us()), samples) << max_us << " " << min_us;
      EXPECT_EQ(ToVector(d.sorted_samples_us()), want) << max_us << " " << min_us;
      EXPECT_EQ(d.Mean().count(), std::llround(sum / 3000.0L)) << max_us << " " << min_us;
    }
  }
  // Already sorted input stays as it is.
  std::vector<int64_t> sorted(500);
  for (size_t i = 0; i < sorted.size(); ++i) sorted[i] = static_cast<int64_t>(i * 7);
  EXPECT_EQ(ToVector(LatencyDistribution(sorted).sorted_samples_us()), sorted);
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

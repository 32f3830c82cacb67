#include "sloserve/engine/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace sloserve {
namespace {

double ExactQuantile(std::vector<int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return static_cast<double>(v[lo]) +
         (static_cast<double>(v[hi] - v[lo])) * (pos - static_cast<double>(lo));
}

TEST(LatencyHistogramTest, ExactBelowTwoMillisecondsAndWithinATenthOfAPercentAbove) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> dist(std::log(30000.0), 1.5);  // 30 ms median, heavy tail
  std::vector<int64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 200000; ++i) {
    int64_t v = i % 10 == 0 ? static_cast<int64_t>(rng() % 2048) : static_cast<int64_t>(dist(rng));
    values.push_back(v);
    h.Add(v);
  }
  for (double q : {0.0, 0.01, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0}) {
    double exact = ExactQuantile(values, q);
    EXPECT_NEAR(h.QuantileUs(q), exact, std::max(1.0, exact * 1e-3)) << "q=" << q;
  }
  EXPECT_EQ(h.max_us(), *std::max_element(values.begin(), values.end()));
  LatencyHistogram small;
  for (int64_t v : {10, 20, 30, 40}) small.Add(v);
  EXPECT_DOUBLE_EQ(small.QuantileUs(0.5), 25.0);  // numpy: 25
  EXPECT_DOUBLE_EQ(LatencyHistogram().QuantileUs(0.5), 0.0);
}

}  // namespace
}  // namespace sloserve

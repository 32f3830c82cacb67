#include "sloserve/workload/random_variates.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "workload/workload_test_util.h"

namespace sloserve {
namespace {

TEST(RandomVariatesTest, NormalAndExponentialMoments) {
  Rng rng = MakeRng(1, "variates");
  std::vector<double> n, e;
  for (int i = 0; i < 100000; ++i) {
    n.push_back(Normal(rng, 3.0, 2.0));
    e.push_back(StdExponential(rng));
  }
  const auto mn = workload_testing::ComputeMoments(n);
  EXPECT_NEAR(mn.mean, 3.0, 6 * 2.0 / std::sqrt(1e5));
  EXPECT_NEAR(mn.stddev, 2.0, 0.03);
  const auto me = workload_testing::ComputeMoments(e);
  EXPECT_NEAR(me.mean, 1.0, 0.02);
  EXPECT_NEAR(me.stddev, 1.0, 0.03);
}

TEST(RandomVariatesTest, GammaMomentsAcrossShapes) {
  for (double shape : {0.1, 0.5, 1.0, 3.0, 20.0}) {
    Rng rng = MakeRng(2, "gamma");
    std::vector<double> xs;
    for (int i = 0; i < 100000; ++i) xs.push_back(StdGamma(rng, shape));
    const auto m = workload_testing::ComputeMoments(xs);
    const double sd = std::sqrt(shape);
    EXPECT_NEAR(m.mean, shape, 6 * sd / std::sqrt(1e5)) << shape;
    EXPECT_NEAR(m.stddev, sd, sd * 0.06) << shape;
  }
}

TEST(RandomVariatesTest, UniformIntCoversRangeInclusive) {
  Rng rng = MakeRng(3, "int");
  int counts[5] = {0, 0, 0, 0, 0};
  for (int i = 0; i < 50000; ++i) {
    const int64_t v = UniformInt(rng, 10, 14);
    ASSERT_GE(v, 10);
    ASSERT_LE(v, 14);
    ++counts[v - 10];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 6 * 90);
}

}  // namespace
}  // namespace sloserve

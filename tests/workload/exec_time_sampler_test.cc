#include "sloserve/workload/exec_time_sampler.h"

#include <algorithm>
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "workload/workload_test_util.h"

namespace sloserve {
namespace {

using ::testing::HasSubstr;
using Component = NormalMixtureExecTime::Component;

std::vector<int64_t> Draw(ExecTimeSampler& s, int n, uint64_t seed) {
  Rng rng = MakeRng(seed, "exec");
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(s.Sample(rng).count());
  return out;
}

TEST(ConstantExecTimeTest, Everything) {
  auto s = ConstantExecTime::Create(Millis(3));
  ASSERT_TRUE(s.ok());
  Rng rng = MakeRng(1, "exec");
  EXPECT_EQ((*s)->Sample(rng), Millis(3));
  EXPECT_EQ((*s)->Quantile(0.99), Millis(3));
  EXPECT_EQ((*s)->Mean(), Millis(3));
  EXPECT_FALSE(ConstantExecTime::Create(Micros(-1)).ok());
}

TEST(NormalMixtureExecTimeTest, MeanStdAndQuantiles) {
  // Mean 9500 us, SD sqrt(50.125e6) ~ 7080 us.
  auto s = NormalMixtureExecTime::Create({{0.7, 5000, 500}, {0.3, 20000, 3000}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_NEAR((*s)->Mean().count(), 9500, 1);
  const auto xs = Draw(**s, 100000, 1);
  const auto m = workload_testing::ComputeMoments(xs);
  EXPECT_NEAR(m.mean, 9500.0, 7080.0 / std::sqrt(1e5) * 6);
  EXPECT_NEAR(m.stddev, std::sqrt(50.125e6), 0.02 * std::sqrt(50.125e6));
  for (double q : {0.1, 0.5, 0.7, 0.9, 0.99}) {
    const int64_t qv = (*s)->Quantile(q).count();
    const double frac =
        std::count_if(xs.begin(), xs.end(), [&](int64_t x) { return x <= qv; }) / 1e5;
    EXPECT_NEAR(frac, q, 0.006) << "q=" << q;  // SE <= 0.0016
  }
  EXPECT_LE((*s)->Quantile(0.5), (*s)->Quantile(0.51));
}

TEST(NormalMixtureExecTimeTest, ClampedBelowAtMin) {
  auto s = NormalMixtureExecTime::Create({{1.0, 100, 1000}}, Micros(50));
  ASSERT_TRUE(s.ok());
  const auto xs = Draw(**s, 100000, 2);
  EXPECT_EQ(*std::min_element(xs.begin(), xs.end()), 50);
  const auto m = workload_testing::ComputeMoments(xs);
  EXPECT_NEAR(m.mean, static_cast<double>((*s)->Mean().count()), 6 * 1000 / std::sqrt(1e5));
  EXPECT_EQ((*s)->Quantile(0.3), Micros(50));  // P(X <= 50) = Phi(-0.05) ~ 0.48
  EXPECT_GT((*s)->Quantile(0.6), Micros(50));
}

TEST(NormalMixtureExecTimeTest, Validation) {
  EXPECT_THAT(NormalMixtureExecTime::Create({}).status().message(), HasSubstr("non-empty"));
  EXPECT_THAT(NormalMixtureExecTime::Create({{0, 10, 1}}).status().message(), HasSubstr("weight"));
  EXPECT_THAT(NormalMixtureExecTime::Create({{1, -1, 1}}).status().message(), HasSubstr("mean_us"));
  EXPECT_THAT(NormalMixtureExecTime::Create({{1, 10, -1}}).status().message(), HasSubstr("std_us"));
  EXPECT_THAT(NormalMixtureExecTime::Create({{1, 10, 1}}, Duration(0)).status().message(),
              HasSubstr("min"));
}

TEST(EmpiricalExecTimeTest, QuantilesMeanAndSupport) {
  auto s = EmpiricalExecTime::Create({Micros(40), Micros(10), Micros(30), Micros(20)});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->Mean(), Micros(25));
  EXPECT_EQ((*s)->Quantile(0.0), Micros(10));
  EXPECT_EQ((*s)->Quantile(0.5), Micros(25));
  EXPECT_EQ((*s)->Quantile(1.0), Micros(40));
  EXPECT_EQ((*s)->Quantile(2.0), Micros(40));
  int seen[5] = {0, 0, 0, 0, 0};
  for (int64_t x : Draw(**s, 4000, 3)) {
    ASSERT_TRUE(x % 10 == 0 && x >= 10 && x <= 40) << x;
    ++seen[x / 10];
  }
  for (int i = 1; i <= 4; ++i) EXPECT_NEAR(seen[i], 1000, 6 * std::sqrt(750.0));
  EXPECT_FALSE(EmpiricalExecTime::Create({}).ok());
  EXPECT_FALSE(EmpiricalExecTime::Create({Micros(-1)}).ok());
}

TEST(HistogramExecTimeTest, QuantilesMeanAndSupport) {
  auto s = HistogramExecTime::Create(Micros(100), Micros(10), {1, 0, 3});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->Mean(), Micros(120));  // 0.25 * 105 + 0.75 * 125
  EXPECT_EQ((*s)->Quantile(0.0), Micros(100));
  EXPECT_EQ((*s)->Quantile(0.25), Micros(110));
  EXPECT_EQ((*s)->Quantile(0.5), Micros(123));  // 120 + 10 * (0.25 / 0.75)
  EXPECT_EQ((*s)->Quantile(1.0), Micros(130));
  const auto xs = Draw(**s, 40000, 4);
  int low = 0;
  for (int64_t x : xs) {
    ASSERT_GE(x, 100);
    ASSERT_LE(x, 130);
    ASSERT_FALSE(x > 110 && x < 120) << x;  // the empty bin
    if (x <= 110) ++low;
  }
  EXPECT_NEAR(low / 40000.0, 0.25, 0.011);
  EXPECT_NEAR(workload_testing::ComputeMoments(xs).mean, 120.0, 0.5);
  EXPECT_FALSE(HistogramExecTime::Create(Micros(0), Micros(0), {1}).ok());
  EXPECT_FALSE(HistogramExecTime::Create(Micros(0), Micros(1), {0, 0}).ok());
  EXPECT_FALSE(HistogramExecTime::Create(Micros(0), Micros(1), {}).ok());
}

}  // namespace
}  // namespace sloserve

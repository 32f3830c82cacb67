#include "sloserve/workload/arrival_process.h"

#include <chrono>
#include <iostream>

#include <gtest/gtest.h>

#include "workload/workload_test_util.h"

namespace sloserve {
namespace {

using workload_testing::ComputeMoments;
using workload_testing::DrainUs;
using workload_testing::Gaps;

void ExpectWellFormed(const std::vector<int64_t>& times, Duration horizon) {
  ASSERT_FALSE(times.empty());
  EXPECT_GT(times.front(), 0);
  EXPECT_LT(times.back(), horizon.count());
  for (size_t i = 1; i < times.size(); ++i) ASSERT_LE(times[i - 1], times[i]) << i;
}

TEST(PoissonArrivalsTest, RateAndCvMatch) {
  // 200k expected arrivals: count SD ~ 447 (0.22%); CV SE ~ 0.3%. Tolerances ~5 SE.
  PoissonArrivals p(2000.0, Seconds(100), MakeRng(1, "test"));
  const std::vector<int64_t> t = DrainUs(p);
  ExpectWellFormed(t, Seconds(100));
  EXPECT_NEAR(static_cast<double>(t.size()), 200000.0, 2500.0);
  const auto m = ComputeMoments(Gaps(t));
  EXPECT_NEAR(m.mean, 500.0, 500.0 * 0.015);
  EXPECT_NEAR(m.Cv(), 1.0, 0.02);
  EXPECT_FALSE(p.Next().has_value());  // stays ended
}

TEST(PoissonArrivalsTest, SameSeedSameSequenceDifferentSeedDiffers) {
  PoissonArrivals a(500.0, Seconds(20), MakeRng(7, "arrivals"));
  PoissonArrivals b(500.0, Seconds(20), MakeRng(7, "arrivals"));
  PoissonArrivals c(500.0, Seconds(20), MakeRng(8, "arrivals"));
  PoissonArrivals d(500.0, Seconds(20), MakeRng(7, "other-stream"));
  const auto ta = DrainUs(a);
  EXPECT_EQ(ta, DrainUs(b));
  EXPECT_NE(ta, DrainUs(c));
  EXPECT_NE(ta, DrainUs(d));
}

struct GammaCase {
  double cv;
  double cv_tolerance;  // ~5+ standard errors of the sample CV at n = 200k
};
void PrintTo(const GammaCase& c, std::ostream* os) {
  *os << "cv=" << c.cv;
}

class GammaArrivalsTest : public ::testing::TestWithParam<GammaCase> {};

TEST_P(GammaArrivalsTest, RateAndCvMatch) {
  const GammaCase c = GetParam();
  GammaArrivals g(1000.0, c.cv, Seconds(200), MakeRng(3, "gamma"));
  const std::vector<int64_t> t = DrainUs(g);
  ExpectWellFormed(t, Seconds(200));
  // Count of a renewal process: SD ~ sqrt(n) * cv (<= 1800 for cv = 4): 5 SD < 4.5%.
  EXPECT_NEAR(static_cast<double>(t.size()), 200000.0, 200000.0 * 0.045);
  const auto m = ComputeMoments(Gaps(t));
  EXPECT_NEAR(m.Cv(), c.cv, c.cv * c.cv_tolerance);
}

INSTANTIATE_TEST_SUITE_P(Cvs, GammaArrivalsTest,
                         ::testing::Values(GammaCase{0.5, 0.02}, GammaCase{1.0, 0.02},
                                           GammaCase{2.0, 0.05}, GammaCase{4.0, 0.09}),
                         [](const ::testing::TestParamInfo<GammaCase>& info) {
                           return "cv" + std::to_string(static_cast<int>(info.param.cv * 10));
                         });

TEST(GammaArrivalsTest, Deterministic) {
  GammaArrivals a(300.0, 2.0, Seconds(10), MakeRng(5, "g"));
  GammaArrivals b(300.0, 2.0, Seconds(10), MakeRng(5, "g"));
  EXPECT_EQ(DrainUs(a), DrainUs(b));
}

TEST(ConstantArrivalsTest, ExactSpacingBeforeHorizon) {
  ConstantArrivals c(1000.0, Seconds(1));
  const std::vector<int64_t> t = DrainUs(c);
  ASSERT_EQ(t.size(), 999u);  // 1 ms, 2 ms, ..., 999 ms; 1 s is the (exclusive) horizon
  for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i], static_cast<int64_t>(i + 1) * 1000);
}

TEST(ConstantArrivalsTest, NonIntegerPeriodRoundsUpWithoutDrift) {
  ConstantArrivals c(3.0, Seconds(1) + Micros(1));
  EXPECT_EQ(DrainUs(c), (std::vector<int64_t>{333334, 666667, 1000000}));
}

TEST(ArrivalThroughputTest, Report554kPoissonArrivals) {
  // Not asserted: prints how long generating ~554k Poisson arrivals takes.
  const auto start = std::chrono::steady_clock::now();
  PoissonArrivals p(2052.0, Seconds(270), MakeRng(1, "bench"));
  int64_t n = 0;
  int64_t last = 0;
  while (auto t = p.Next()) {
    ++n;
    last = t->time_since_epoch().count();
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ perf     ] " << n << " Poisson arrivals in " << ms << " ms (last at " << last
            << " us)\n";
  EXPECT_GT(n, 500000);
}

}  // namespace
}  // namespace sloserve

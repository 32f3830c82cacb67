#include "sloserve/workload/trace_arrivals.h"

#include <chrono>
#include <cmath>
#include <iostream>

#include <gtest/gtest.h>

#include "workload/workload_test_util.h"

namespace sloserve {
namespace {

using workload_testing::DrainUs;

std::vector<int64_t> CountPerInterval(const std::vector<int64_t>& times, Duration step, size_t n) {
  std::vector<int64_t> counts(n, 0);
  for (int64_t t : times) {
    const auto i = static_cast<size_t>((t - 1) / step.count());  // times are rounded up
    if (i < n) ++counts[i];
  }
  return counts;
}

// Each interval's count is Poisson(rate x step): allow 6 SD (+3 for rounding at edges).
void ExpectCountsMatch(const std::vector<int64_t>& counts, const RateSeries& s) {
  for (size_t i = 0; i < counts.size(); ++i) {
    const double expected = s.rates_qps[i] * ToSeconds(s.step);
    EXPECT_NEAR(static_cast<double>(counts[i]), expected, 6.0 * std::sqrt(expected) + 3.0)
        << "interval " << i;
  }
}

TEST(TraceArrivalsTest, PerIntervalCountsFollowRates) {
  RateSeries s{Seconds(10), {100, 0, 1000, 0, 0, 50}};
  TraceArrivals p(s, Duration(0), MakeRng(11, "trace"));
  const std::vector<int64_t> t = DrainUs(p);
  ASSERT_FALSE(t.empty());
  EXPECT_GT(t.front(), 0);
  EXPECT_LT(t.back(), Seconds(60).count());
  for (size_t i = 1; i < t.size(); ++i) ASSERT_LE(t[i - 1], t[i]);
  const auto counts = CountPerInterval(t, s.step, s.rates_qps.size());
  EXPECT_EQ(counts[1], 0);
  EXPECT_EQ(counts[3], 0);
  EXPECT_EQ(counts[4], 0);
  ExpectCountsMatch(counts, s);
  EXPECT_FALSE(p.Next().has_value());
}

TEST(TraceArrivalsTest, HorizonCutsTheReplay) {
  RateSeries s{Seconds(1), {1000, 1000, 1000}};
  TraceArrivals p(s, Millis(1500), MakeRng(1, "trace"));
  const std::vector<int64_t> t = DrainUs(p);
  EXPECT_LT(t.back(), Millis(1500).count());
  EXPECT_NEAR(static_cast<double>(t.size()), 1500.0, 6 * std::sqrt(1500.0));
}

TEST(TraceArrivalsTest, AllZeroTraceEndsImmediately) {
  RateSeries s{Seconds(1), std::vector<double>(100000, 0.0)};
  TraceArrivals p(s, Duration(0), MakeRng(1, "trace"));
  EXPECT_FALSE(p.Next().has_value());
}

TEST(TraceArrivalsTest, Deterministic) {
  RateSeries s{Seconds(1), {10, 200, 30}};
  TraceArrivals a(s, Duration(0), MakeRng(9, "trace"));
  TraceArrivals b(s, Duration(0), MakeRng(9, "trace"));
  EXPECT_EQ(DrainUs(a), DrainUs(b));
}

TEST(TraceArrivalsTest, TwitterTraceReplay) {
  const std::string path = workload_testing::TwitterQpsTracePath();
  if (path.empty()) GTEST_SKIP() << "twitter_04_25 trace not available";
  StatusOr<RateSeries> s = LoadQpsIntervalTrace(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const auto start = std::chrono::steady_clock::now();
  TraceArrivals p(*s, Duration(0), MakeRng(2, "twitter"));
  const std::vector<int64_t> t = DrainUs(p);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ perf     ] twitter_04_25 replay: " << t.size() << " arrivals in " << ms
            << " ms (including collection into a vector)\n";
  // Total ~ Poisson(752420): SD 867; 6 SD ~ 0.7%.
  EXPECT_NEAR(static_cast<double>(t.size()), s->ExpectedCount(), 6 * std::sqrt(752420.0));
  ExpectCountsMatch(CountPerInterval(t, s->step, s->rates_qps.size()), *s);
}

}  // namespace
}  // namespace sloserve

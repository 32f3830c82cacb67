#include "sloserve/workload/arrival_spec.h"

#include <algorithm>
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "workload/workload_test_util.h"

namespace sloserve {
namespace {

using ::testing::HasSubstr;
using workload_testing::DrainUs;
using workload_testing::TempFile;

ArrivalSpec Synthetic(const std::string& kind, double rate, Duration horizon) {
  ArrivalSpec spec;
  spec.kind = kind;
  spec.rate_qps = rate;
  spec.horizon = horizon;
  return spec;
}

std::string ErrorOf(const ArrivalSpec& spec) {
  auto p = MakeArrivalProcess(spec, 1);
  return p.ok() ? "OK" : p.status().message();
}

TEST(ArrivalSpecTest, BuildsEachSyntheticKind) {
  for (const char* kind : {"poisson", "gamma", "constant"}) {
    ArrivalSpec spec = Synthetic(kind, 1000, Seconds(2));
    spec.cv = 0.5;
    auto p = MakeArrivalProcess(spec, 42);
    ASSERT_TRUE(p.ok()) << kind << ": " << p.status().ToString();
    const auto t = DrainUs(**p);
    EXPECT_NEAR(static_cast<double>(t.size()), 2000.0, 300.0) << kind;
    EXPECT_DOUBLE_EQ(*MeanRateQps(spec), 1000.0);
  }
}

// Issue 37 (A): the ranges' edges still finish (each arrival advances or the horizon
// ends), and past them the spec is refused instead of spinning.
TEST(ArrivalSpecTest, RangesEdgesFinishAndBeyondIsRefused) {
  for (double cv : {kMinGammaCv, kMaxGammaCv}) {
    ArrivalSpec spec = Synthetic("gamma", kMaxArrivalRateQps, Millis(20));
    spec.cv = cv;
    auto p = MakeArrivalProcess(spec, 5);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const auto t = DrainUs(**p);
    // Expected 20,000; cv 100 is bursty, so only an order of magnitude is asked.
    EXPECT_LT(t.size(), 2'000'000u) << cv;
    EXPECT_TRUE(std::is_sorted(t.begin(), t.end())) << cv;
  }
  auto poisson = MakeArrivalProcess(Synthetic("poisson", kMaxArrivalRateQps, Millis(20)), 5);
  ASSERT_TRUE(poisson.ok());
  EXPECT_NEAR(static_cast<double>(DrainUs(**poisson).size()), 20'000, 2'000);

  EXPECT_THAT(ErrorOf(Synthetic("poisson", 1e308, Seconds(1))),
              HasSubstr("rate_qps must be in (0, 1e+06] (got 1e+308)"));
  ArrivalSpec g = Synthetic("gamma", 10, Seconds(1));
  g.cv = 1e308;
  EXPECT_THAT(ErrorOf(g), HasSubstr("cv must be in [0.001, 100] (got 1e+308)"));
  EXPECT_THAT(ErrorOf(Synthetic("constant", 1e6, Seconds(101))),
              HasSubstr("rate_qps x horizon expects 1.01e+08 arrivals, more than 1e+08"));
  // A trace's effective rate is bounded the same way.
  TempFile f("1000 2000\n");
  ArrivalSpec t;
  t.kind = "rps_trace";
  t.trace_path = f.path();
  t.rate_scale = 1000;
  EXPECT_THAT(ErrorOf(t), HasSubstr("trace second 1 of trace '" + f.path() +
                                    "' replays at 2e+06 qps after rate_scale and "
                                    "time_compression, more than 1e+06"));
  t.rate_scale = 1;
  t.time_compression = 1e3;
  EXPECT_THAT(ErrorOf(t), HasSubstr("replays at 2e+06 qps"));
  t.time_compression = 1e308;
  EXPECT_THAT(ErrorOf(t), HasSubstr("time_compression must be in (0, 1e+06] (got 1e+308)"));
}

TEST(ArrivalSpecTest, SameSeedSameSequence) {
  ArrivalSpec spec = Synthetic("gamma", 500, Seconds(5));
  spec.cv = 2;
  auto a = MakeArrivalProcess(spec, 3);
  auto b = MakeArrivalProcess(spec, 3);
  auto c = MakeArrivalProcess(spec, 4);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const auto ta = DrainUs(**a);
  EXPECT_EQ(ta, DrainUs(**b));
  EXPECT_NE(ta, DrainUs(**c));
}

TEST(ArrivalSpecTest, InvalidSpecsNameTheField) {
  EXPECT_THAT(ErrorOf(Synthetic("poisson", 0, Seconds(1))), HasSubstr("rate_qps"));
  EXPECT_THAT(ErrorOf(Synthetic("constant", -5, Seconds(1))), HasSubstr("rate_qps"));
  EXPECT_THAT(ErrorOf(Synthetic("poisson", NAN, Seconds(1))), HasSubstr("rate_qps"));
  EXPECT_THAT(ErrorOf(Synthetic("poisson", 10, Duration(0))), HasSubstr("horizon"));
  ArrivalSpec g = Synthetic("gamma", 10, Seconds(1));
  g.cv = 0;
  EXPECT_THAT(ErrorOf(g), HasSubstr("cv"));
  EXPECT_THAT(ErrorOf(Synthetic("weibull", 10, Seconds(1))), HasSubstr("unknown kind 'weibull'"));

  ArrivalSpec t;
  t.kind = "rps_trace";
  EXPECT_THAT(ErrorOf(t), HasSubstr("trace_path"));
  t.trace_path = "/nonexistent/rps.txt";
  EXPECT_THAT(ErrorOf(t), HasSubstr("/nonexistent/rps.txt"));
  t.rate_scale = 0;
  EXPECT_THAT(ErrorOf(t), HasSubstr("rate_scale"));
  t.rate_scale = 1;
  t.time_compression = -1;
  EXPECT_THAT(ErrorOf(t), HasSubstr("time_compression"));
  t.time_compression = 1;
  t.window_start_s = -1;
  EXPECT_THAT(ErrorOf(t), HasSubstr("window_start_s"));
  t.window_start_s = 5;
  t.window_end_s = 5;
  EXPECT_THAT(ErrorOf(t), HasSubstr("window_end_s"));
}

TEST(ArrivalSpecTest, RpsTraceWindowScaleAndCompression) {
  TempFile f("# per-second RPS\n100 200 300 400\n500 600 700 800\n");
  ArrivalSpec spec;
  spec.kind = "rps_trace";
  spec.trace_path = f.path();
  spec.window_start_s = 2;
  spec.window_end_s = 6;  // 300 400 500 600
  spec.rate_scale = 2.0;
  StatusOr<RateSeries> s = EffectiveRateSeries(spec);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->step, Seconds(1));
  EXPECT_EQ(s->rates_qps, (std::vector<double>{600, 800, 1000, 1200}));
  EXPECT_DOUBLE_EQ(*MeanRateQps(spec), 900.0);

  spec.time_compression = 4.0;  // each trace second in 250 ms, same expected count
  s = EffectiveRateSeries(spec);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->step, Millis(250));
  EXPECT_EQ(s->rates_qps, (std::vector<double>{2400, 3200, 4000, 4800}));
  EXPECT_DOUBLE_EQ(s->ExpectedCount(), 3600.0);

  auto p = MakeArrivalProcess(spec, 5);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const auto t = DrainUs(**p);
  EXPECT_LT(t.back(), Seconds(1).count());
  EXPECT_NEAR(static_cast<double>(t.size()), 3600.0, 6 * 60.0);

  spec.horizon = Millis(500);  // first two compressed intervals only
  EXPECT_DOUBLE_EQ(*MeanRateQps(spec), 2800.0);
}

TEST(ArrivalSpecTest, RpsTraceWindowMustFitTheFile) {
  TempFile f("1 2 3 4 5 6 7 8\n");
  ArrivalSpec spec;
  spec.kind = "rps_trace";
  spec.trace_path = f.path();
  spec.window_end_s = 9;
  EXPECT_THAT(ErrorOf(spec), HasSubstr("window_end_s 9 s is past the end"));
  spec.window_end_s = -1;
  spec.window_start_s = 8;
  EXPECT_THAT(ErrorOf(spec), HasSubstr("window_start_s"));
  spec.window_start_s = 9;
  EXPECT_THAT(ErrorOf(spec), HasSubstr("past the end"));
}

TEST(ArrivalSpecTest, QpsTraceWindowMustBeOnIntervalBoundaries) {
  TempFile f("0 100\n10 200\n20 300\n");
  ArrivalSpec spec;
  spec.kind = "qps_interval_trace";
  spec.trace_path = f.path();
  spec.rate_scale = 0.5;
  EXPECT_NEAR(*MeanRateQps(spec), 100.0, 1e-9);
  spec.window_start_s = 10;
  EXPECT_NEAR(*MeanRateQps(spec), 125.0, 1e-9);
  spec.window_start_s = 5;
  EXPECT_THAT(ErrorOf(spec), HasSubstr("interval boundary"));
}

TEST(ArrivalSpecTest, MalformedTraceErrorCarriesFileAndLine) {
  TempFile f("0 100\n10 200\noops\n");
  ArrivalSpec spec;
  spec.kind = "qps_interval_trace";
  spec.trace_path = f.path();
  EXPECT_THAT(ErrorOf(spec), HasSubstr(f.path() + ":3:"));
}

TEST(ArrivalSpecTest, TwitterQpsTraceMeanAndScale) {
  const std::string path = workload_testing::TwitterQpsTracePath();
  if (path.empty()) GTEST_SKIP() << "twitter_04_25 trace not available";
  ArrivalSpec spec;
  spec.kind = "qps_interval_trace";
  spec.trace_path = path;
  EXPECT_NEAR(*MeanRateQps(spec), 752420.0 / 270.0, 1e-6);
  spec.rate_scale = 0.5;
  auto p = MakeArrivalProcess(spec, 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const auto t = DrainUs(**p);
  EXPECT_NEAR(static_cast<double>(t.size()), 376210.0, 6 * std::sqrt(376210.0));
}

TEST(ArrivalSpecTest, InfAdapterWindowFromSharedDataset) {
  const std::string path = workload_testing::InfAdapterRpsTracePath();
  if (path.empty()) GTEST_SKIP() << "InfAdapter RPS trace not available";
  StatusOr<RateSeries> raw = LoadRpsTrace(path);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->rates_qps.size(), 1899061u);
  EXPECT_NEAR(raw->MeanQps(), 63.6, 0.1);
  ArrivalSpec spec;
  spec.kind = "rps_trace";
  spec.trace_path = path;
  spec.window_start_s = 15 * 86400 + 82 * 60;
  spec.window_end_s = 15 * 86400 + 103 * 60;
  StatusOr<RateSeries> s = EffectiveRateSeries(spec, *raw);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->rates_qps.size(), 21u * 60u);
  // README: about 43 RPS for ten minutes, then a spike (peak 274) in minutes 11-15.
  double first10 = 0;
  for (size_t i = 0; i < 600; ++i) first10 += s->rates_qps[i];
  EXPECT_NEAR(first10 / 600.0, 43.0, 8.0);
  EXPECT_EQ(*std::max_element(s->rates_qps.begin(), s->rates_qps.end()), 274.0);
  auto p = MakeArrivalProcess(spec, *raw, 1);
  ASSERT_TRUE(p.ok());
  const auto t = DrainUs(**p);
  EXPECT_NEAR(static_cast<double>(t.size()), s->ExpectedCount(), 6 * std::sqrt(s->ExpectedCount()));
}

}  // namespace
}  // namespace sloserve

// The request histograms' bounds (issue 36 item 2): dense around each SLO served, so a
// p99 near the SLO is read within a tenth of it; configurable and checked.
#include "sloserve/server/request_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace sloserve {
namespace {

// The bucket that holds `seconds`: (lower, upper].
std::pair<double, double> BucketAround(const std::vector<double>& b, double seconds) {
  const auto it = std::lower_bound(b.begin(), b.end(), seconds);
  return {it == b.begin() ? 0.0 : *(it - 1), it == b.end() ? INFINITY : *it};
}

TEST(LatencyBuckets, DenseAroundEachSlo) {
  const std::vector<double> b = LatencyBucketsForSlos({Millis(150), Millis(750)});
  ASSERT_TRUE(CheckLatencyBuckets(b).ok());
  for (double slo : {0.150, 0.750}) {
    EXPECT_NE(std::find(b.begin(), b.end(), slo), b.end()) << slo;  // the SLO is a bound
    // Near the SLO (0.9x..1.1x) a bucket is at most a tenth of the SLO wide: the
    // defaults alone put 150 ms inside (0.1, 0.2], where a 136 ms p99 read as 197 ms.
    for (double at : {0.91 * slo, 0.99 * slo, 1.01 * slo, 1.09 * slo}) {
      const auto [lo, hi] = BucketAround(b, at);
      EXPECT_LE(hi - lo, 0.1 * slo + 1e-9) << at;
    }
  }
  const auto [lo, hi] = BucketAround(b, 0.136);
  EXPECT_EQ(lo, 0.135);
  EXPECT_EQ(hi, 0.15);
  // The 1-2-5 defaults stay, far from any SLO.
  EXPECT_NE(std::find(b.begin(), b.end(), 60.0), b.end());
  EXPECT_NE(std::find(b.begin(), b.end(), 0.0005), b.end());
  // Many SLOs: still within the limit, ascending.
  std::vector<Duration> many;
  for (int ms = 10; ms <= 2000; ms += 10) many.push_back(Millis(ms));
  EXPECT_TRUE(CheckLatencyBuckets(LatencyBucketsForSlos(many)).ok());
}

TEST(LatencyBuckets, BadBoundsAreNamed) {
  EXPECT_FALSE(CheckLatencyBuckets({}).ok());
  EXPECT_NE(CheckLatencyBuckets({0.1, 0.05}).message().find("ascending"), std::string::npos);
  EXPECT_NE(CheckLatencyBuckets({0.1, -1}).message().find("(0, 86400]"), std::string::npos);
  EXPECT_FALSE(CheckLatencyBuckets({0.1, NAN}).ok());
  EXPECT_FALSE(CheckLatencyBuckets(std::vector<double>(65, 1.0)).ok());
}

TEST(LatencyBuckets, HistogramUsesTheBoundsGiven) {
  RequestMetrics m({"image"}, {0.1, 0.15, 0.2});
  InferOutcome ok;
  ok.variant = "v";
  ok.worker = "w0";
  ok.met_slo = true;
  m.RecordOutcome(0, ok, Millis(136), 1);
  m.RecordOutcome(0, ok, Millis(150), 1);  // on the bound: in its bucket (le)
  m.RecordOutcome(0, ok, Millis(500), 1);
  const std::string text = m.RenderPrometheus();
  auto bucket = [&](const std::string& le) {
    const std::string key =
        "sloserve_request_duration_seconds_bucket{model=\"image\",variant=\"v\","
        "worker=\"w0\",le=\"" +
        le + "\"} ";
    const size_t at = text.find(key);
    return at == std::string::npos ? -1 : std::stoi(text.substr(at + key.size()));
  };
  EXPECT_EQ(bucket("0.1"), 0);
  EXPECT_EQ(bucket("0.15"), 2);
  EXPECT_EQ(bucket("0.2"), 2);
  EXPECT_EQ(bucket("+Inf"), 3);
  EXPECT_EQ(text.find("le=\"0.5\""), std::string::npos);  // only the bounds given
}

}  // namespace
}  // namespace sloserve

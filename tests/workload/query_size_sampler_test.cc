#include "sloserve/workload/query_size_sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace sloserve {
namespace {

using ::testing::HasSubstr;

TEST(QuerySizeSamplerTest, ConstantFromName) {
  auto s = MakeQuerySizeSampler("constant:7");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Rng rng = MakeRng(1, "sizes");
  for (int i = 0; i < 10; ++i) EXPECT_EQ((*s)->Sample(rng), 7);
  EXPECT_EQ((*s)->Mean(), 7.0);
}

TEST(QuerySizeSamplerTest, BadNames) {
  EXPECT_THAT(MakeQuerySizeSampler("constant:0").status().message(), HasSubstr("constant:0"));
  EXPECT_THAT(MakeQuerySizeSampler("constant:x").status().message(), HasSubstr(">= 1"));
  EXPECT_THAT(MakeQuerySizeSampler("zipf").status().message(), HasSubstr("unknown"));
}

TEST(QuerySizeSamplerTest, DeepRecSysSharesAndMean) {
  auto s = MakeQuerySizeSampler("deeprecsys");
  ASSERT_TRUE(s.ok());
  Rng rng = MakeRng(2024, "sizes");
  constexpr int kN = 200000;
  int bins[4] = {0, 0, 0, 0};
  double sum = 0;
  for (int i = 0; i < kN; ++i) {
    const int32_t v = (*s)->Sample(rng);
    ASSERT_GE(v, 1);
    ASSERT_LT(v, 1000);
    sum += v;
    if (v < 100) {
      ++bins[0];
    } else if (v <= 200) {
      ++bins[1];
    } else if (v < 600) {
      ++bins[2];
    } else {
      ++bins[3];
    }
  }
  // Share SEs at n = 200k are <= 0.11%; tolerances are >= 5 SE.
  EXPECT_NEAR(bins[0] / double{kN}, 0.080, 0.004);
  EXPECT_NEAR(bins[1] / double{kN}, 0.650, 0.007);  // README observed 64.6%
  EXPECT_NEAR(bins[2] / double{kN}, 0.220, 0.006);  // README observed 22.3%
  EXPECT_NEAR(bins[3] / double{kN}, 0.050, 0.004);  // README observed 5.1%
  // Mean ~ 238 analytically (README: about 239); SD of a size ~ 190, SE ~ 0.43.
  EXPECT_NEAR(sum / kN, (*s)->Mean(), 3.0);
  EXPECT_NEAR((*s)->Mean(), 239.0, 2.0);
}

TEST(QuerySizeSamplerTest, GaussianIsTruncatedToTheProfiledRange) {
  auto s = MakeQuerySizeSampler("gaussian:240:120");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Rng rng = MakeRng(7, "sizes");
  constexpr int kN = 100000;
  double sum = 0, sq = 0;
  for (int i = 0; i < kN; ++i) {
    const int32_t v = (*s)->Sample(rng);
    ASSERT_GE(v, 1);
    ASSERT_LE(v, 1000);
    sum += v;
    sq += static_cast<double>(v) * v;
  }
  const double mean = sum / kN;
  // Truncation at 1 lifts the mean above 240 (by ~6); the analytic mean says by how much.
  EXPECT_GT((*s)->Mean(), 243);
  EXPECT_NEAR(mean, (*s)->Mean(), 1.5);  // SE ~ 0.4
  EXPECT_NEAR(std::sqrt(sq / kN - mean * mean), 112, 6);
  // Far from the bounds it is a plain normal.
  auto mid = MakeQuerySizeSampler("gaussian:500:50");
  ASSERT_TRUE(mid.ok());
  EXPECT_NEAR((*mid)->Mean(), 500, 1e-6);
  for (const char* bad : {"gaussian:240", "gaussian:0:10", "gaussian:240:0", "gaussian:240:x",
                          "gaussian:2000:10", "gaussian::"}) {
    EXPECT_THAT(MakeQuerySizeSampler(bad).status().message(), HasSubstr("gaussian:<mean>")) << bad;
  }
}

// Kairos Fig. 12's change of distribution: the first spec's sizes before the switch time,
// the second's from it on; Sample without a time (offline samples) and Mean are the first's.
TEST(QuerySizeSamplerTest, SwitchChangesTheDistributionAtItsTime) {
  auto s = MakeQuerySizeSampler("switch:60:constant:5/gaussian:600:150");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Rng rng = MakeRng(1, "sizes");
  EXPECT_EQ((*s)->SampleAt(rng, Seconds(0)), 5);
  EXPECT_EQ((*s)->SampleAt(rng, Millis(59'999)), 5);
  EXPECT_EQ((*s)->Sample(rng), 5);
  EXPECT_EQ((*s)->Mean(), 5);
  double sum = 0;
  for (int i = 0; i < 1000; ++i) sum += (*s)->SampleAt(rng, Seconds(60) + Millis(i));
  EXPECT_NEAR(sum / 1000, 600, 20);
  for (const char* bad :
       {"switch:60:deeprecsys", "switch:0:deeprecsys/deeprecsys", "switch:x:deeprecsys/deeprecsys",
        "switch:60/deeprecsys", "switch:60:switch:1:constant:1/constant:2/deeprecsys"}) {
    EXPECT_THAT(MakeQuerySizeSampler(bad).status().message(), HasSubstr("switch:<seconds>")) << bad;
  }
  // A bad inner spec is named as such.
  EXPECT_THAT(MakeQuerySizeSampler("switch:60:deeprecsys/lognormal").status().message(),
              HasSubstr("unknown query size sampler 'lognormal'"));
}

TEST(QuerySizeSamplerTest, DeterministicPerStream) {
  DeepRecSysSizeSampler s;
  Rng a = MakeRng(5, "sizes");
  Rng b = MakeRng(5, "sizes");
  Rng c = MakeRng(5, "sizes-2");
  std::vector<int32_t> va, vb, vc;
  for (int i = 0; i < 1000; ++i) {
    va.push_back(s.Sample(a));
    vb.push_back(s.Sample(b));
    vc.push_back(s.Sample(c));
  }
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
}

}  // namespace
}  // namespace sloserve

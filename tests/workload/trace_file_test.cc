#include "sloserve/workload/trace_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "workload/workload_test_util.h"

namespace sloserve {
namespace {

using ::testing::HasSubstr;
using workload_testing::TempFile;

TEST(QpsIntervalTraceTest, ParsesCommentsAndIntervals) {
  TempFile f("# RAMSIS-style trace\n\n0 1850\n10 1617\n  # indented comment\n20 1880\n");
  StatusOr<RateSeries> s = LoadQpsIntervalTrace(f.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->step, Seconds(10));
  EXPECT_EQ(s->rates_qps, (std::vector<double>{1850, 1617, 1880}));
  EXPECT_EQ(s->Span(), Seconds(30));
  EXPECT_DOUBLE_EQ(s->ExpectedCount(), (1850 + 1617 + 1880) * 10.0);
  EXPECT_DOUBLE_EQ(s->MeanQps(), (1850 + 1617 + 1880) / 3.0);
}

TEST(QpsIntervalTraceTest, MalformedLineNamesFileAndLine) {
  TempFile f("# header\n0 100\n10 abc\n");
  StatusOr<RateSeries> s = LoadQpsIntervalTrace(f.path());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr(f.path() + ":3:"));
}

TEST(QpsIntervalTraceTest, RejectsBadShapes) {
  EXPECT_THAT(ParseQpsIntervalTrace("0 1\n10 2 3\n", "t").status().message(), HasSubstr("t:2:"));
  EXPECT_THAT(ParseQpsIntervalTrace("0 1\n10 2\n25 3\n", "t").status().message(),
              HasSubstr("t:3:"));
  EXPECT_THAT(ParseQpsIntervalTrace("0 1\n10 2\n5 3\n", "t").status().message(), HasSubstr("t:3:"));
  EXPECT_THAT(ParseQpsIntervalTrace("0 1\n10 -2\n", "t").status().message(),
              HasSubstr("t:2: negative"));
  EXPECT_THAT(ParseQpsIntervalTrace("# only\n", "t").status().message(), HasSubstr("no data"));
  EXPECT_FALSE(ParseQpsIntervalTrace("0 5\n", "t").ok());  // interval undefined
}

TEST(QpsIntervalTraceTest, MissingFileIsNotFound) {
  StatusOr<RateSeries> s = LoadQpsIntervalTrace("/nonexistent/trace.txt");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(s.status().message(), HasSubstr("/nonexistent/trace.txt"));
}

TEST(QpsIntervalTraceTest, TwitterTraceTotals) {
  const std::string path = workload_testing::TwitterQpsTracePath();
  if (path.empty()) GTEST_SKIP() << "twitter_04_25 trace not available";
  StatusOr<RateSeries> s = LoadQpsIntervalTrace(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->rates_qps.size(), 27u);
  EXPECT_EQ(s->step, Seconds(10));
  EXPECT_EQ(s->rates_qps.front(), 1850);
  EXPECT_EQ(*std::min_element(s->rates_qps.begin(), s->rates_qps.end()), 1617);
  EXPECT_EQ(*std::max_element(s->rates_qps.begin(), s->rates_qps.end()), 3905);
  // Sum of value x 10 s over the 27 intervals of the published file.
  EXPECT_DOUBLE_EQ(s->ExpectedCount(), 752420.0);
}

TEST(RpsTraceTest, ParsesAnyNumberPerLine) {
  TempFile f("1 2 3\n# comment\n4\t5\n\n0 0 10\n");
  StatusOr<RateSeries> s = LoadRpsTrace(f.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->step, Seconds(1));
  EXPECT_EQ(s->rates_qps, (std::vector<double>{1, 2, 3, 4, 5, 0, 0, 10}));
}

TEST(RpsTraceTest, MalformedTokenNamesFileAndLine) {
  TempFile f("1 2 3\n4 x 5\n");
  StatusOr<RateSeries> s = LoadRpsTrace(f.path());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr(f.path() + ":2:"));
  EXPECT_THAT(s.status().message(), HasSubstr("field 2 is not a non-negative integer"));
  EXPECT_THAT(ParseRpsTrace("1\n2\n-3\n", "r").status().message(), HasSubstr("r:3:"));
  EXPECT_THAT(ParseRpsTrace("1 2.5\n", "r").status().message(), HasSubstr("r:1:"));
  EXPECT_FALSE(ParseRpsTrace("#\n\n", "r").ok());
}

// Issue 37: `workload.trace: /proc/self/environ` printed the environment in the error.
// A malformed line is described by position, never quoted.
TEST(TraceFileTest, ErrorsDoNotQuoteTheFilesContent) {
  const std::string secret = std::string("FAKE_SECRET=abc") + '\0' + "OTHER=1";
  for (const std::string& text : {secret + "\n", "1 " + secret + "\n", "1 2 " + secret + "\n"}) {
    const std::string qps = ParseQpsIntervalTrace(text, "/proc/x").status().message();
    EXPECT_THAT(qps, HasSubstr("/proc/x:1: expected '<seconds> <value>'"));
    EXPECT_EQ(qps.find("SECRET"), std::string::npos) << qps;
    const std::string rps = ParseRpsTrace(text, "/proc/x").status().message();
    EXPECT_THAT(rps, HasSubstr("/proc/x:1: field "));
    EXPECT_EQ(rps.find("SECRET"), std::string::npos) << rps;
  }
}

}  // namespace
}  // namespace sloserve

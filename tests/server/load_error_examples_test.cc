// Issue 36 item 1: loadgen's report keeps the first answer of each kind of error (status and
// message), so a user whose requests all fail sees why.
#include <gtest/gtest.h>

#include "sloserve/loadgen/load_report.h"

namespace sloserve {
namespace {

TEST(LoadErrorExamplesTest, FirstAnswerOfEachKindInTextAndJson) {
  LoadRecorder rec(10);
  for (int i = 0; i < 3; ++i) rec.RecordHttpError(400, R"({"error":"input shape [1,16] is bad"})");
  rec.RecordHttpError(400, R"({"error":"another reason"})");
  rec.RecordHttpError(503, "plain text\x1b[31m");
  rec.RecordHttpError(429);
  LoadReport r = rec.Finish(6, 6, Seconds(1), Seconds(1), 50, 1);
  ASSERT_EQ(r.error_examples.size(), 4u);
  EXPECT_EQ(r.error_examples[0].status, 400);
  EXPECT_EQ(r.error_examples[0].message, "input shape [1,16] is bad");
  EXPECT_EQ(r.error_examples[1].message, "another reason");
  EXPECT_EQ(r.error_examples[2].message, "plain text?[31m");  // no terminal control bytes
  EXPECT_EQ(r.error_examples[3].message, "");
  const std::string text = r.ToText();
  EXPECT_NE(text.find("first HTTP 400: input shape [1,16] is bad"), std::string::npos) << text;
  EXPECT_NE(text.find("first HTTP 503: plain text"), std::string::npos) << text;
  const auto j = r.ToJson();
  ASSERT_EQ(j["error_examples"].size(), 4u);
  EXPECT_EQ(j["error_examples"][1]["status"], 400);
  EXPECT_EQ(j["error_examples"][1]["message"], "another reason");
}

TEST(LoadErrorExamplesTest, KindsAreBounded) {
  LoadRecorder rec(100);
  for (int i = 0; i < 50; ++i)
    rec.RecordHttpError(400, "{\"error\":\"reason " + std::to_string(i) + "\"}");
  LoadReport r = rec.Finish(50, 50, Seconds(1), Seconds(1), 50, 1);
  EXPECT_EQ(r.error_examples.size(), LoadReport::kMaxErrorExamples);
  EXPECT_EQ(r.http_errors, 50);
}

}  // namespace
}  // namespace sloserve

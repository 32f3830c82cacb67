#include "sloserve/core/did_you_mean.h"

#include <gtest/gtest.h>

namespace sloserve {
namespace {

TEST(DidYouMeanTest, EditDistanceCountsEditsAndAdjacentSwaps) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("window_ms", "window_ms"), 0u);
  EXPECT_EQ(EditDistance("windw_ms", "window_ms"), 1u);  // insertion
  EXPECT_EQ(EditDistance("resnet500", "resnet50"), 1u);  // deletion
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);      // classic Levenshtein
  EXPECT_EQ(EditDistance("varaint", "variant"), 1u);     // one adjacent swap
  EXPECT_EQ(EditDistance("ca", "abc"), 3u);              // OSA, not full Damerau (2)
  EXPECT_EQ(EditDistance("Workers", "workers"), 1u);     // case-sensitive
}

TEST(DidYouMeanTest, SuggestsOnlyCloseNames) {
  const std::vector<std::string> keys = {"workers", "seed", "workload.load_qps", "workload.cv",
                                         "slo_ms"};
  EXPECT_EQ(ClosestName("wrokers", keys), "workers");
  EXPECT_EQ(ClosestName("Workers", keys), "workers");  // case differences count 0
  EXPECT_EQ(ClosestName("workload.lod_qps", keys), "workload.load_qps");
  EXPECT_EQ(ClosestName("load_qps", keys), "workload.load_qps");  // by its last part
  EXPECT_EQ(ClosestName("slo", keys), "");                        // 3 edits: too far
  EXPECT_EQ(ClosestName("frobnicate", keys), "");
  EXPECT_EQ(ClosestName("workers", keys), "");  // itself is not a suggestion
  EXPECT_EQ(ClosestName("", keys), "");
  // A one-letter name does not mean every other one-letter name.
  EXPECT_EQ(ClosestName("x", {"b", "d"}), "");
  // A unique prefix of 4+ characters, when nothing is within edit distance.
  EXPECT_EQ(ClosestName("violation", {"accuracy", "violation_rate", "p99_ms"}), "violation_rate");
  EXPECT_EQ(ClosestName("work", keys), "");         // workers and workload.*: ambiguous
  EXPECT_EQ(ClosestName("see", {"seed"}), "seed");  // within distance 1 anyway
  EXPECT_EQ(ClosestName("p99", {"p99_ms"}), "");    // too short for a prefix
  // The closest wins; ties go to the first.
  EXPECT_EQ(ClosestName("resnet5", {"resnet101", "resnet50", "resnet18"}), "resnet50");
  EXPECT_EQ(ClosestName("abcd_ef", {"abcd_eg", "abcd_eh"}), "abcd_eg");
}

TEST(DidYouMeanTest, FormatsHintAndList) {
  EXPECT_EQ(DidYouMean("windw_ms", {"window_ms", "quantile"}), "did you mean 'window_ms'? ");
  EXPECT_EQ(DidYouMean("zzz", {"window_ms"}), "");
  EXPECT_EQ(JoinNames({"a", "b", "c"}), "a, b, c");
  EXPECT_EQ(JoinNames({}), "");
}

}  // namespace
}  // namespace sloserve

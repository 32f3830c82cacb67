#include <gtest/gtest.h>

#include "sloserve/report/pivot.h"
#include "sloserve/report/svg_plot.h"

namespace sloserve {
namespace {

TEST(SvgPlotTest, NiceTicksCoverTheRangeWithRoundSteps) {
  auto t = NiceTicks(400, 2800);
  EXPECT_LE(t.front(), 400);
  EXPECT_GE(t.back(), 2800);
  EXPECT_DOUBLE_EQ(t[1] - t[0], 500);
  auto small = NiceTicks(0.0012, 0.0481);
  EXPECT_LE(small.front(), 0.0012);
  EXPECT_GE(small.back(), 0.0481);
  EXPECT_EQ(NiceTicks(5, 5).size() >= 2, true);  // degenerate range still drawable
}

TEST(SvgPlotTest, RendersEverySeriesAndEscapesNames) {
  std::string svg = RenderLinePlot({{"a<b", {{1, 2}, {2, 3}}}, {"c", {{1, 1}}}}, {"t", "x", "y"});
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("a&lt;b"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
}

TEST(PivotTest, FiltersAveragesSeedsAndPivots) {
  std::vector<nlohmann::json> rows = {
      {{"policy", "a"}, {"load_qps", 100}, {"accuracy", 80}, {"violation_rate", 0.01}},
      {{"policy", "a"}, {"load_qps", 100}, {"accuracy", 82}, {"violation_rate", 0.02}},
      {{"policy", "b"}, {"load_qps", 200}, {"accuracy", 70}, {"violation_rate", 0.30}},
  };
  auto f = ParseRowFilter("violation_rate<0.05");
  ASSERT_TRUE(f.ok());
  std::vector<nlohmann::json> kept;
  for (const auto& r : rows) {
    if (RowPasses(r, *f)) kept.push_back(r);
  }
  ASSERT_EQ(kept.size(), 2u);
  auto p = BuildPivot(rows, "load_qps", "accuracy", "policy");
  ASSERT_TRUE(p.ok());
  EXPECT_DOUBLE_EQ(p->cells.at({"a", 100}), 81);
  EXPECT_EQ(p->series, (std::vector<std::string>{"a", "b"}));
  std::string md = PivotMarkdown(*p);
  EXPECT_NE(md.find("| 100 | 81 | – |"), std::string::npos) << md;
  EXPECT_FALSE(ParseRowFilter("nonsense").ok());
  EXPECT_TRUE(RowPasses(rows[2], ParseRowFilter("policy=b").value()));
  EXPECT_FALSE(BuildPivot(rows, "nope", "accuracy", "policy").ok());
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

TEST(PivotTest, UnknownFieldIsAnErrorNamingTheFields) {
  const std::vector<nlohmann::json> rows = {
      {{"policy", "a"}, {"load_qps", 100}, {"violation_rate", 0.01}},
      {{"policy", "b"}, {"load_qps", 100}, {"policy.variant", "x"}}};
  EXPECT_EQ(RowFields(rows),
            (std::vector<std::string>{"load_qps", "policy", "policy.variant", "violation_rate"}));
  // Present in some row: fine (rows without it fail the filter, as before).
  EXPECT_TRUE(CheckRowField(rows, "violation_rate", "--where").ok());
  EXPECT_TRUE(CheckRowField(rows, "policy.variant", "--where").ok());
  Status st = CheckRowField(rows, "violatoin", "--where");
  EXPECT_EQ(st.message(),
            "--where: unknown field 'violatoin' (fields: load_qps, policy, policy.variant, "
            "violation_rate)");
  st = CheckRowField(rows, "violaton_rate", "--y");
  EXPECT_EQ(st.message(),
            "--y: unknown field 'violaton_rate' (did you mean 'violation_rate'? fields: "
            "load_qps, policy, policy.variant, violation_rate)");
  EXPECT_TRUE(CheckRowField({}, "anything", "--where").ok());  // no rows: nothing to name
}

TEST(PivotTest, ResourceSavingIsFewestWorkersMatchingEachBaselinePoint) {
  std::vector<nlohmann::json> rows;
  auto add = [&](const char* p, int w, double acc) {
    rows.push_back({{"policy", p}, {"workers", w}, {"accuracy", acc}});
  };
  add("ramsis", 20, 75);
  add("ramsis", 30, 80);
  add("ramsis", 40, 83);
  add("jf", 30, 74);
  add("jf", 40, 79);
  add("jf", 50, 84);  // never matched by ramsis
  auto p = BuildPivot(rows, "workers", "accuracy", "policy");
  ASSERT_TRUE(p.ok());
  auto s = ResourceSavings(*p, "ramsis");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].baseline_x, 30);
  EXPECT_EQ(s[0].method_x, 20);
  EXPECT_NEAR(s[0].saving, 1.0 / 3.0, 1e-12);
  EXPECT_EQ(s[1].method_x, 30);
  EXPECT_NEAR(s[1].saving, 0.25, 1e-12);
}

}  // namespace
}  // namespace sloserve

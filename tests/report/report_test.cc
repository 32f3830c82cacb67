#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sloserve/report/pivot.h"
#include "sloserve/report/run_table.h"
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
  // One value too large for +-1 to move it, and two values a double barely tells apart
  // (a seed near 2^53): a few ticks, not a step of 0 looping for ever.
  for (const auto& [lo, hi] :
       std::vector<std::pair<double, double>>{{1e16, 1e16},
                                              {1e300, 1e300},
                                              {-1e20, -1e20},
                                              {4503599627370496.0, 4503599627370498.0},
                                              {9007199254740992.0, 9007199254740992.0}}) {
    const std::vector<double> ticks = NiceTicks(lo, hi);
    EXPECT_GE(ticks.size(), 2u) << lo;
    EXPECT_LE(ticks.size(), 20u) << lo;
    EXPECT_LE(ticks.front(), lo);
    EXPECT_GE(ticks.back(), hi);
  }
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
  // An order on text failed every row, silently: a non-numeric value is refused.
  EXPECT_FALSE(ParseRowFilter("violation_rate<abc").ok());
  EXPECT_TRUE(ParseRowFilter("policy!=abc").ok());
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

namespace sloserve {
namespace {

// Paper-quality plots (issue 36 item 3): units on the axes, error bars over seeds, a log
// scale, reference lines, series told apart without colour, margins from the labels.
TEST(SvgPlotTest, AxisLabelsCarryUnits) {
  EXPECT_EQ(AxisLabel("p99_ms"), "p99 latency (ms)");
  EXPECT_EQ(AxisLabel("load_qps"), "offered load (queries/s)");
  EXPECT_EQ(AxisLabel("t_s"), "time (s)");
  EXPECT_EQ(AxisLabel("queue_wait_ms"), "queue_wait (ms)");  // unit from the suffix
  EXPECT_EQ(AxisLabel("forecast_rps"), "forecast (requests/s)");
  EXPECT_EQ(AxisLabel("policy.beta"), "policy.beta");  // nothing known: as it is
}

TEST(SvgPlotTest, LogTicksArePowersOfTenAndFineForShortRanges) {
  EXPECT_EQ(LogTicks(21, 190000), (std::vector<double>{10, 100, 1000, 10000, 100000, 1000000}));
  const std::vector<double> short_range = LogTicks(3, 40);  // 1, 2, 5, 10, 20, 50, 100
  EXPECT_EQ(short_range.front(), 1);
  EXPECT_EQ(short_range.back(), 100);
  EXPECT_NE(std::find(short_range.begin(), short_range.end(), 20.0), short_range.end());
}

TEST(PivotTest, SeedSpreadGivesMinMaxAndConfidenceBars) {
  std::vector<nlohmann::json> rows;
  for (double y : {10.0, 12.0, 14.0})
    rows.push_back({{"policy", "a"}, {"load_qps", 100}, {"p99_ms", y}});
  rows.push_back({{"policy", "a"}, {"load_qps", 200}, {"p99_ms", 30}});  // one run: no bar
  auto p = BuildPivot(rows, "load_qps", "p99_ms", "policy");
  ASSERT_TRUE(p.ok());
  const CellSpread& c = p->spread.at({"a", 100});
  EXPECT_EQ(c.n, 3);
  EXPECT_DOUBLE_EQ(c.sd, 2.0);
  auto minmax = PivotSeries(*p, ErrorBars::kMinMax);
  ASSERT_EQ(minmax[0].points.size(), 2u);
  EXPECT_TRUE(minmax[0].points[0].has_bar);
  EXPECT_DOUBLE_EQ(minmax[0].points[0].lo, 10);
  EXPECT_DOUBLE_EQ(minmax[0].points[0].hi, 14);
  EXPECT_FALSE(minmax[0].points[1].has_bar);
  // 95% CI of the mean: 12 +- t(0.975, 2) * 2 / sqrt(3) = 12 +- 4.303 * 1.1547.
  auto ci = PivotSeries(*p, ErrorBars::kCi95);
  EXPECT_NEAR(ci[0].points[0].hi - 12, 4.303 * 2 / std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(12 - ci[0].points[0].lo, 4.303 * 2 / std::sqrt(3.0), 1e-9);
  EXPECT_FALSE(PivotSeries(*p, ErrorBars::kNone)[0].points[0].has_bar);
  EXPECT_FALSE(ParseErrorBars("stderr").ok());
}

TEST(SvgPlotTest, LogScaleReferenceLinesBarsAndGreyscaleStyles) {
  std::vector<PlotSeries> series(3);
  for (int i = 0; i < 3; ++i) {
    series[i].name = "series" + std::to_string(i);
    series[i].points = {{1, 10.0 * (i + 1), 5, 20, true}, {2, 0, 0, 0, false}, {3, 1000, 0, 0}};
  }
  PlotOptions o;
  o.title = "t";
  o.y_label = "p99 latency (ms)";
  o.log_y = true;
  o.hlines = {{150, "SLO 150 ms"}};
  const RenderedPlot plot = RenderPlot(series, o);
  EXPECT_EQ(plot.points_left_out, 3);  // y = 0 cannot be drawn on a log axis
  EXPECT_NE(plot.svg.find("SLO 150 ms"), std::string::npos);
  EXPECT_NE(plot.svg.find("log scale"), std::string::npos);
  EXPECT_NE(plot.svg.find(">1000<"), std::string::npos);  // a power-of-ten tick
  // Series differ by more than colour: a dash pattern and a marker shape each.
  EXPECT_NE(plot.svg.find("stroke-dasharray=\"7,4\""), std::string::npos);
  EXPECT_NE(plot.svg.find("<rect x="), std::string::npos);     // the square marker
  EXPECT_NE(plot.svg.find("<polygon"), std::string::npos);     // the triangle marker
  EXPECT_NE(plot.svg.find("<path d=\"M"), std::string::npos);  // an error bar
  // Wider tick labels move the plot area right (the margin follows them).
  auto plot_left = [](const std::string& svg) {
    const size_t at = svg.find("fill=\"none\" stroke=\"#333\"");
    const size_t x = svg.rfind("<rect x=\"", at);
    return std::stod(svg.substr(x + 9));
  };
  PlotOptions lin;
  std::vector<PlotSeries> narrow = {{"a", {{0, 1}, {1, 2}}}};
  std::vector<PlotSeries> wide = {{"a", {{0, 12000}, {1, 98000}}}};  // ticks to "100000"
  EXPECT_GT(plot_left(RenderLinePlot(wide, lin)), plot_left(RenderLinePlot(narrow, lin)) + 20);
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

// serve's latency phases (metrics.h) reach its --json summary and its text summary only
// when they were kept.
TEST(RunTableTest, PhasesAppearOnlyWhenKept) {
  MetricsSummary m;
  EXPECT_FALSE(SummaryJson(m).contains("phases"));
  EXPECT_EQ(SummaryText(m).find("phases"), std::string::npos);
  m.phases.count = 5;
  m.phases.queue = {.p50_ms = 0, .p99_ms = 0.9, .mean_ms = 0.1, .max_ms = 1};
  m.phases.exec = {.p50_ms = 0.4, .p99_ms = 1.1, .mean_ms = 0.5, .max_ms = 2};
  m.phases.handoff = {.p50_ms = 0.04, .p99_ms = 1.2, .mean_ms = 0.08, .max_ms = 3};
  const nlohmann::json j = SummaryJson(m);
  ASSERT_TRUE(j.contains("phases"));
  EXPECT_EQ(j["phases"]["count"], 5);
  EXPECT_DOUBLE_EQ(j["phases"]["exec"]["p99_ms"].get<double>(), 1.1);
  EXPECT_DOUBLE_EQ(j["phases"]["handoff"]["max_ms"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(j["phases"]["queue"]["mean_ms"].get<double>(), 0.1);
  EXPECT_NE(SummaryText(m).find("exec 0.400 / 1.100 / 0.500"), std::string::npos) << SummaryText(m);
}

}  // namespace
}  // namespace sloserve

#pragma once
// SVG line charts for reports and papers: several named series of (x, y) points with
// optional error bars, linear or logarithmic y, horizontal reference lines (an SLO), a
// legend. Series differ by colour, marker shape and dash pattern, so a plot stays
// readable in greyscale. The margins follow the labels' estimated widths. No
// dependencies; the output opens in any browser (and converts to PNG with rsvg-convert).
#include <string>
#include <vector>

namespace sloserve {

struct PlotPoint {
  double x = 0, y = 0;
  // An error bar from lo to hi (e.g. min-max over seeds); none when lo == hi == y.
  double lo = 0, hi = 0;
  bool has_bar = false;
};

struct PlotSeries {
  std::string name;
  std::vector<PlotPoint> points;  // drawn in x order
};

struct ReferenceLine {
  double y = 0;
  std::string label;  // drawn at the line's right end
};

struct PlotOptions {
  std::string title;
  std::string x_label;
  std::string y_label;
  int width = 720;
  int height = 440;
  bool markers = true;
  bool log_y = false;  // points with y <= 0 are left out (RenderLinePlot counts them)
  std::vector<ReferenceLine> hlines;
};

struct RenderedPlot {
  std::string svg;
  int points_left_out = 0;  // log_y: points (or bar ends) at y <= 0 that cannot be drawn
};

RenderedPlot RenderPlot(const std::vector<PlotSeries>& series, const PlotOptions& options);
// The SVG alone (callers that do not ask for a log scale).
std::string RenderLinePlot(const std::vector<PlotSeries>& series, const PlotOptions& options);

// Ticks covering [lo, hi] at a 1/2/5 x 10^k step, about `target` of them.
std::vector<double> NiceTicks(double lo, double hi, int target = 6);
// Ticks of a log axis covering [lo, hi] (both > 0): the powers of ten, and 2 and 5 times
// them when the range spans fewer than three decades.
std::vector<double> LogTicks(double lo, double hi);

// An axis label for a result field: a name and unit for the fields sloserve writes
// ("p99_ms" -> "p99 latency (ms)", "load_qps" -> "offered load (queries/s)"), else the
// field with a unit read from its suffix (_ms, _s, _qps, _rps), else the field itself.
std::string AxisLabel(const std::string& field);

}  // namespace sloserve

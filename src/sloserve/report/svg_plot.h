#pragma once
// Minimal SVG line charts for reports: one chart, several named series of (x, y)
// points, linear axes with "nice" ticks, a legend. No dependencies; the output opens in
// any browser.
#include <string>
#include <vector>

namespace sloserve {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // drawn in x order
};

struct PlotOptions {
  std::string title;
  std::string x_label;
  std::string y_label;
  int width = 720;
  int height = 440;
  bool markers = true;
};

std::string RenderLinePlot(const std::vector<PlotSeries>& series, const PlotOptions& options);

// Ticks covering [lo, hi] at a 1/2/5 x 10^k step, about `target` of them.
std::vector<double> NiceTicks(double lo, double hi, int target = 6);

}  // namespace sloserve

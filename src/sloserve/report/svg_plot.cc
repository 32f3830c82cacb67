#include "sloserve/report/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace sloserve {
namespace {

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!(hi > lo)) {
    lo -= 1;
    hi += 1;
  }
  double raw = (hi - lo) / std::max(1, target);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step) * step, last = std::ceil(hi / step) * step;
  for (double t = first; t <= last + step * 1e-9; t += step) ticks.push_back(t);
  return ticks;
}

std::string RenderLinePlot(const std::vector<PlotSeries>& series, const PlotOptions& o) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const PlotSeries& s : series) {
    for (auto [x, y] : s.points) {
      xlo = std::min(xlo, x);
      xhi = std::max(xhi, x);
      ylo = std::min(ylo, y);
      yhi = std::max(yhi, y);
    }
  }
  if (!std::isfinite(xlo)) xlo = 0, xhi = 1, ylo = 0, yhi = 1;
  std::vector<double> xt = NiceTicks(xlo, xhi), yt = NiceTicks(ylo, yhi);
  xlo = xt.front(), xhi = xt.back(), ylo = yt.front(), yhi = yt.back();
  const double left = 70, right = 170, top = 40, bottom = 55;
  const double pw = o.width - left - right, ph = o.height - top - bottom;
  auto sx = [&](double x) { return left + (xhi > xlo ? (x - xlo) / (xhi - xlo) : 0.5) * pw; };
  auto sy = [&](double y) { return top + ph - (yhi > ylo ? (y - ylo) / (yhi - ylo) : 0.5) * ph; };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << o.width << "\" height=\""
      << o.height << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << o.width / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">"
      << Escape(o.title) << "</text>\n";
  for (double t : xt) {
    svg << "<line x1=\"" << sx(t) << "\" y1=\"" << top << "\" x2=\"" << sx(t) << "\" y2=\""
        << top + ph << "\" stroke=\"#eee\"/>\n<text x=\"" << sx(t) << "\" y=\"" << top + ph + 18
        << "\" text-anchor=\"middle\">" << Num(t) << "</text>\n";
  }
  for (double t : yt) {
    svg << "<line x1=\"" << left << "\" y1=\"" << sy(t) << "\" x2=\"" << left + pw << "\" y2=\""
        << sy(t) << "\" stroke=\"#eee\"/>\n<text x=\"" << left - 8 << "\" y=\"" << sy(t) + 4
        << "\" text-anchor=\"end\">" << Num(t) << "</text>\n";
  }
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph
      << "\" fill=\"none\" stroke=\"#333\"/>\n"
      << "<text x=\"" << left + pw / 2 << "\" y=\"" << o.height - 12 << "\" text-anchor=\"middle\">"
      << Escape(o.x_label) << "</text>\n"
      << "<text transform=\"translate(16," << top + ph / 2
      << ") rotate(-90)\" text-anchor=\"middle\">" << Escape(o.y_label) << "</text>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    std::vector<std::pair<double, double>> pts = series[i].points;
    std::sort(pts.begin(), pts.end());
    if (pts.size() > 1) {
      svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
      for (auto [x, y] : pts) svg << sx(x) << "," << sy(y) << " ";
      svg << "\"/>\n";
    }
    if (o.markers) {
      for (auto [x, y] : pts) {
        svg << "<circle cx=\"" << sx(x) << "\" cy=\"" << sy(y) << "\" r=\"3\" fill=\"" << color
            << "\"/>\n";
      }
    }
    double ly = top + 10 + 18 * static_cast<double>(i);
    svg << "<line x1=\"" << left + pw + 12 << "\" y1=\"" << ly << "\" x2=\"" << left + pw + 32
        << "\" y2=\"" << ly << "\" stroke=\"" << color << "\" stroke-width=\"3\"/>\n<text x=\""
        << left + pw + 38 << "\" y=\"" << ly + 4 << "\">" << Escape(series[i].name) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace sloserve

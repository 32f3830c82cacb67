#include "sloserve/report/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace sloserve {
namespace {

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
// With the marker shapes, what tells series apart in greyscale.
const char* kDashes[] = {"", "7,4", "2,3", "9,3,2,3", "4,2", "12,4"};
constexpr int kShapes = 6;  // circle, square, triangle, diamond, inverted triangle, cross
constexpr double kFontSize = 12;
constexpr double kCharWidth = 0.6 * kFontSize;  // sans-serif at 12 px: ~7 px a character

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
  std::string s = buf;  // "1e+06" -> "1e6", "2.5e-05" -> "2.5e-5": shorter tick labels
  if (const size_t e = s.find('e'); e != std::string::npos) {
    std::string exp = s.substr(e + 1);
    const bool neg = exp[0] == '-';
    if (exp[0] == '+' || exp[0] == '-') exp.erase(0, 1);
    while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
    s = s.substr(0, e + 1) + (neg ? "-" : "") + exp;
  }
  return s;
}

double TextWidth(const std::string& s) {
  return kCharWidth * static_cast<double>(s.size());
}

void Marker(std::ostringstream& svg, int shape, double x, double y, const char* color) {
  const double r = 3.5;
  svg << "<";
  switch (shape % kShapes) {
    case 0:
      svg << "circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"" << r << "\"";
      break;
    case 1:
      svg << "rect x=\"" << x - r << "\" y=\"" << y - r << "\" width=\"" << 2 * r << "\" height=\""
          << 2 * r << "\"";
      break;
    case 2:
      svg << "polygon points=\"" << x << "," << y - r - 1 << " " << x - r - 1 << "," << y + r << " "
          << x + r + 1 << "," << y + r << "\"";
      break;
    case 3:
      svg << "polygon points=\"" << x << "," << y - r - 1 << " " << x + r + 1 << "," << y << " "
          << x << "," << y + r + 1 << " " << x - r - 1 << "," << y << "\"";
      break;
    case 4:
      svg << "polygon points=\"" << x << "," << y + r + 1 << " " << x - r - 1 << "," << y - r << " "
          << x + r + 1 << "," << y - r << "\"";
      break;
    default:
      svg << "path d=\"M" << x - r << "," << y - r << "L" << x + r << "," << y + r << "M" << x - r
          << "," << y + r << "L" << x + r << "," << y - r << "\" stroke-width=\"2\" stroke=\""
          << color << "\"";
      break;
  }
  svg << " fill=\"" << color << "\"/>\n";
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!(hi > lo)) {  // one value: a span around it that shows at its magnitude (1e16 + 1 is 1e16)
    const double pad = std::max(1.0, std::abs(lo) * 0.05);
    lo -= pad;
    hi += pad;
  }
  double raw = (hi - lo) / std::max(1, target);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  const double first = std::floor(lo / step) * step, last = std::ceil(hi / step) * step;
  // Values closer than a double resolves at their magnitude (2^52 and 2^52 + 2): a step
  // would not move a tick, so the two ends are the ticks.
  if (!(step > 0) || !std::isfinite(first) || !std::isfinite(last) || first + step == first ||
      last - step == last) {
    return {lo, hi};
  }
  std::vector<double> ticks;
  for (double t = first; t <= last + step * 1e-9 && ticks.size() <= 10 * size_t(target) + 10;
       t += step) {
    ticks.push_back(t);
  }
  return ticks;
}

std::vector<double> LogTicks(double lo, double hi) {
  if (!(lo > 0)) lo = 1;
  if (!(hi > lo)) hi = lo * 10;
  const int first = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int last = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  const bool fine = last - first < 3;
  std::vector<double> ticks;
  for (int e = first; e <= std::max(last, first + 1); ++e) {
    const double p = std::pow(10.0, e);
    ticks.push_back(p);
    if (fine && e < std::max(last, first + 1)) {
      ticks.push_back(2 * p);
      ticks.push_back(5 * p);
    }
  }
  return ticks;
}

std::string AxisLabel(const std::string& field) {
  static const std::map<std::string, std::string> known = {
      {"load_qps", "offered load (queries/s)"},
      {"qps", "throughput (queries/s)"},
      {"rank", "rank"},
      {"throughput_qps", "throughput (queries/s)"},
      {"goodput_qps", "goodput (queries/s)"},
      {"p50_ms", "p50 latency (ms)"},
      {"p95_ms", "p95 latency (ms)"},
      {"p99_ms", "p99 latency (ms)"},
      {"mean_ms", "mean latency (ms)"},
      {"max_ms", "max latency (ms)"},
      {"mean_queue_ms", "mean queueing (ms)"},
      {"mean_latency_s", "mean latency (s)"},
      {"violation_rate", "SLO violation rate (fraction)"},
      {"accuracy", "accuracy (%)"},
      {"t_s", "time (s)"},
      {"slo_ms", "SLO (ms)"},
      {"workers", "workers"},
      {"cores", "cores"},
      {"cold_starts", "cold starts"},
      {"cost_per_hour", "cost ($/h)"},
      {"cost_usd", "cost ($)"},
      {"core_seconds", "core-seconds"},
      {"utilization", "utilization (fraction)"},
      {"mean_batch_size", "mean batch size (rows)"},
      {"cluster.cache_mb", "cache per machine (MB)"},
  };
  if (auto it = known.find(field); it != known.end()) return it->second;
  static const std::vector<std::pair<std::string, std::string>> suffixes = {
      {"_ms", "ms"}, {"_s", "s"}, {"_qps", "queries/s"}, {"_rps", "requests/s"}};
  for (const auto& [suffix, unit] : suffixes) {
    if (field.size() > suffix.size() && field.ends_with(suffix))
      return field.substr(0, field.size() - suffix.size()) + " (" + unit + ")";
  }
  return field;
}

RenderedPlot RenderPlot(const std::vector<PlotSeries>& series, const PlotOptions& o) {
  RenderedPlot out;
  // What can be drawn: on a log axis only y > 0 (a bar end at or below 0 is clipped).
  std::vector<PlotSeries> drawn = series;
  if (o.log_y) {
    for (PlotSeries& s : drawn) {
      const size_t before = s.points.size();
      std::erase_if(s.points, [](const PlotPoint& p) { return !(p.y > 0); });
      out.points_left_out += static_cast<int>(before - s.points.size());
      for (PlotPoint& p : s.points) {
        if (p.has_bar && !(p.lo > 0)) p.lo = p.y;
      }
    }
  }
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const PlotSeries& s : drawn) {
    for (const PlotPoint& p : s.points) {
      xlo = std::min(xlo, p.x);
      xhi = std::max(xhi, p.x);
      ylo = std::min({ylo, p.y, p.has_bar ? p.lo : p.y});
      yhi = std::max({yhi, p.y, p.has_bar ? p.hi : p.y});
    }
  }
  for (const ReferenceLine& h : o.hlines) {
    if (o.log_y && !(h.y > 0)) continue;
    ylo = std::min(ylo, h.y);
    yhi = std::max(yhi, h.y);
  }
  if (!std::isfinite(xlo)) xlo = 0, xhi = 1;
  if (!std::isfinite(ylo)) ylo = o.log_y ? 1 : 0, yhi = o.log_y ? 10 : 1;
  std::vector<double> xt = NiceTicks(xlo, xhi);
  std::vector<double> yt = o.log_y ? LogTicks(ylo, yhi) : NiceTicks(ylo, yhi);
  xlo = xt.front(), xhi = xt.back(), ylo = yt.front(), yhi = yt.back();

  // Margins from the labels' widths: the widest y tick, the longest series name.
  double widest_tick = 0;
  for (double t : yt) widest_tick = std::max(widest_tick, TextWidth(Num(t)));
  double widest_name = 0;
  for (const PlotSeries& s : series) widest_name = std::max(widest_name, TextWidth(s.name));
  const double left = 8 + kFontSize + 10 + widest_tick + 8;
  const double right = std::min(o.width / 2.0, 16 + 32 + 8 + widest_name + 8);
  const double top = 40, bottom = 18 + 16 + 22;
  const double pw = std::max(40.0, o.width - left - right);
  const double ph = std::max(40.0, o.height - top - bottom);
  auto ty = [&](double y) { return o.log_y ? std::log10(y) : y; };
  const double tylo = ty(ylo), tyhi = ty(yhi);
  auto sx = [&](double x) { return left + (xhi > xlo ? (x - xlo) / (xhi - xlo) : 0.5) * pw; };
  auto sy = [&](double y) {
    return top + ph - (tyhi > tylo ? (ty(y) - tylo) / (tyhi - tylo) : 0.5) * ph;
  };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << o.width << "\" height=\""
      << o.height << "\" font-family=\"sans-serif\" font-size=\"" << kFontSize << "\">\n"
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
      << "<text transform=\"translate(" << 8 + kFontSize << "," << top + ph / 2
      << ") rotate(-90)\" text-anchor=\"middle\">"
      << Escape(o.y_label + (o.log_y ? ", log scale" : "")) << "</text>\n";
  for (const ReferenceLine& h : o.hlines) {
    if (o.log_y && !(h.y > 0)) continue;
    svg << "<line x1=\"" << left << "\" y1=\"" << sy(h.y) << "\" x2=\"" << left + pw << "\" y2=\""
        << sy(h.y) << "\" stroke=\"#444\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\n";
    if (!h.label.empty()) {
      svg << "<text x=\"" << left + pw - 4 << "\" y=\"" << sy(h.y) - 5
          << "\" text-anchor=\"end\" fill=\"#444\">" << Escape(h.label) << "</text>\n";
    }
  }
  for (size_t i = 0; i < drawn.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    const char* dash = kDashes[i % std::size(kDashes)];
    const int shape = static_cast<int>(i % kShapes);
    std::vector<PlotPoint> pts = drawn[i].points;
    std::sort(pts.begin(), pts.end(),
              [](const PlotPoint& a, const PlotPoint& b) { return a.x < b.x; });
    for (const PlotPoint& p : pts) {
      if (!p.has_bar || p.hi <= p.lo) continue;
      const double x = sx(p.x);
      svg << "<path d=\"M" << x << "," << sy(p.lo) << "V" << sy(p.hi) << "M" << x - 4 << ","
          << sy(p.lo) << "H" << x + 4 << "M" << x - 4 << "," << sy(p.hi) << "H" << x + 4
          << "\" stroke=\"" << color << "\" fill=\"none\"/>\n";
    }
    if (pts.size() > 1) {
      svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\"";
      if (*dash) svg << " stroke-dasharray=\"" << dash << "\"";
      svg << " points=\"";
      for (const PlotPoint& p : pts) svg << sx(p.x) << "," << sy(p.y) << " ";
      svg << "\"/>\n";
    }
    if (o.markers) {
      for (const PlotPoint& p : pts) Marker(svg, shape, sx(p.x), sy(p.y), color);
    }
    const double ly = top + 10 + 18 * static_cast<double>(i);
    svg << "<line x1=\"" << left + pw + 12 << "\" y1=\"" << ly << "\" x2=\"" << left + pw + 40
        << "\" y2=\"" << ly << "\" stroke=\"" << color << "\" stroke-width=\"2\"";
    if (*dash) svg << " stroke-dasharray=\"" << dash << "\"";
    svg << "/>\n";
    if (o.markers) Marker(svg, shape, left + pw + 26, ly, color);
    svg << "<text x=\"" << left + pw + 46 << "\" y=\"" << ly + 4 << "\">" << Escape(drawn[i].name)
        << "</text>\n";
  }
  svg << "</svg>\n";
  out.svg = svg.str();
  return out;
}

std::string RenderLinePlot(const std::vector<PlotSeries>& series, const PlotOptions& options) {
  return RenderPlot(series, options).svg;
}

}  // namespace sloserve

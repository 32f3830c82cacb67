#include "sloserve/report/pivot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "sloserve/core/declared_key.h"
#include "sloserve/core/did_you_mean.h"

namespace sloserve {
namespace {

bool AsNumber(const nlohmann::json& v, double* out) {
  if (v.is_number()) {
    *out = v.get<double>();
    return true;
  }
  if (v.is_string()) {
    const std::optional<double> parsed = ParseNumber(v.get_ref<const std::string&>());
    if (parsed) *out = *parsed;
    return parsed.has_value();
  }
  return false;
}

std::string AsText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

}  // namespace

StatusOr<RowFilter> ParseRowFilter(const std::string& expr) {
  for (const char* op : {"<=", ">=", "!=", "<", ">", "="}) {
    size_t pos = expr.find(op);
    if (pos == std::string::npos || pos == 0) continue;
    RowFilter f{expr.substr(0, pos), op, expr.substr(pos + std::string(op).size())};
    if (f.value.empty()) break;
    // A text comparison is only = or !=: "violation_rate<abc" failed every row, silently.
    if (f.op != "=" && f.op != "!=" && !ParseNumber(f.value)) {
      return InvalidArgumentError("filter '" + expr + "': " + f.op + " compares numbers, got '" +
                                  f.value + "' (text compares with = or != only)");
    }
    return f;
  }
  return InvalidArgumentError("filter '" + expr +
                              "': expected KEY<op>VALUE with op in < <= > >= = !=");
}

bool RowPasses(const nlohmann::json& row, const RowFilter& f) {
  if (!row.contains(f.key)) return false;
  const nlohmann::json& v = row[f.key];
  double a = 0;
  const std::optional<double> b_parsed = ParseNumber(f.value);
  const double b = b_parsed.value_or(0);
  const bool numeric = b_parsed && AsNumber(v, &a);
  if (f.op == "=") return numeric ? a == b : AsText(v) == f.value;
  if (f.op == "!=") return numeric ? a != b : AsText(v) != f.value;
  if (!numeric) return false;
  if (f.op == "<") return a < b;
  if (f.op == "<=") return a <= b;
  if (f.op == ">") return a > b;
  return a >= b;
}

std::vector<std::string> RowFields(const std::vector<nlohmann::json>& rows) {
  std::set<std::string> fields;
  for (const nlohmann::json& row : rows) {
    if (!row.is_object()) continue;
    for (const auto& [key, value] : row.items()) fields.insert(key);
  }
  return {fields.begin(), fields.end()};
}

Status CheckRowField(const std::vector<nlohmann::json>& rows, const std::string& key,
                     const std::string& flag) {
  if (rows.empty()) return OkStatus();
  for (const nlohmann::json& row : rows) {
    if (row.is_object() && row.contains(key)) return OkStatus();
  }
  const std::vector<std::string> fields = RowFields(rows);
  return InvalidArgumentError(flag + ": unknown field '" + key + "' (" + DidYouMean(key, fields) +
                              "fields: " + JoinNames(fields) + ")");
}

StatusOr<Pivot> BuildPivot(const std::vector<nlohmann::json>& rows, const std::string& x_key,
                           const std::string& y_key, const std::string& series_key) {
  Pivot p;
  p.x_key = x_key;
  p.y_key = y_key;
  p.series_key = series_key;
  std::map<std::pair<std::string, double>, std::vector<double>> values;
  for (const nlohmann::json& row : rows) {
    double x = 0, y = 0;
    if (!row.contains(x_key) || !AsNumber(row[x_key], &x)) {
      return InvalidArgumentError("row has no numeric '" + x_key + "'");
    }
    if (!row.contains(y_key) || !AsNumber(row[y_key], &y)) {
      return InvalidArgumentError("row has no numeric '" + y_key + "'");
    }
    std::string s = row.contains(series_key) ? AsText(row[series_key]) : "";
    if (std::find(p.series.begin(), p.series.end(), s) == p.series.end()) p.series.push_back(s);
    if (std::find(p.xs.begin(), p.xs.end(), x) == p.xs.end()) p.xs.push_back(x);
    values[{s, x}].push_back(y);
  }
  std::sort(p.xs.begin(), p.xs.end());
  for (const auto& [key, ys] : values) {  // repeated runs (seeds) averaged
    CellSpread c;
    c.n = static_cast<int>(ys.size());
    c.min = *std::min_element(ys.begin(), ys.end());
    c.max = *std::max_element(ys.begin(), ys.end());
    double sum = 0;
    for (double y : ys) sum += y;
    const double mean = sum / c.n;
    double ss = 0;
    for (double y : ys) ss += (y - mean) * (y - mean);
    c.sd = c.n > 1 ? std::sqrt(ss / (c.n - 1)) : 0;
    p.cells[key] = mean;
    p.spread[key] = c;
  }
  return p;
}

std::string PivotMarkdown(const Pivot& p) {
  std::string out = "| " + p.x_key + " |";
  for (const std::string& s : p.series) out += " " + s + " |";
  out += "\n|---|";
  for (size_t i = 0; i < p.series.size(); ++i) out += "---|";
  out += "\n";
  char buf[64];
  for (double x : p.xs) {
    std::snprintf(buf, sizeof buf, "%g", x);
    out += std::string("| ") + buf + " |";
    for (const std::string& s : p.series) {
      auto it = p.cells.find({s, x});
      if (it == p.cells.end()) {
        out += " – |";
      } else {
        std::snprintf(buf, sizeof buf, "%.4g", it->second);
        out += std::string(" ") + buf + " |";
      }
    }
    out += "\n";
  }
  return out;
}

std::vector<Saving> ResourceSavings(const Pivot& p, const std::string& method) {
  std::vector<Saving> out;
  for (const std::string& base : p.series) {
    if (base == method) continue;
    for (double xb : p.xs) {
      auto b = p.cells.find({base, xb});
      if (b == p.cells.end()) continue;
      for (double xm : p.xs) {  // ascending: the fewest first
        auto m = p.cells.find({method, xm});
        // Equal within 0.01 accuracy point counts as a match (seed-averaged noise).
        if (m == p.cells.end() || m->second < b->second - 0.01) continue;
        out.push_back({base, xb, b->second, xm, m->second, 1.0 - xm / xb});
        break;
      }
    }
  }
  return out;
}

std::string SavingsMarkdown(const std::vector<Saving>& savings, const std::string& method) {
  std::string out = "| baseline | its workers | its accuracy | " + method + " workers | " + method +
                    " accuracy | saving |\n|---|---|---|---|---|---|\n";
  char buf[256];
  double sum = 0, best = -1e300;
  for (const Saving& s : savings) {
    std::snprintf(buf, sizeof buf, "| %s | %g | %.3f | %g | %.3f | %.1f%% |\n", s.baseline.c_str(),
                  s.baseline_x, s.baseline_y, s.method_x, s.method_y, 100 * s.saving);
    out += buf;
    sum += s.saving;
    best = std::max(best, s.saving);
  }
  if (!savings.empty()) {
    std::snprintf(buf, sizeof buf, "\nmean saving %.1f%%, largest %.1f%%\n",
                  100 * sum / static_cast<double>(savings.size()), 100 * best);
    out += buf;
  }
  return out;
}

// Two-sided 97.5% quantile of Student's t with df degrees of freedom (df >= 1).
double StudentT975(int df) {
  static const double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df <= 30) return kTable[std::max(df, 1) - 1];
  return df <= 60 ? 2.000 : df <= 120 ? 1.980 : 1.960;
}

StatusOr<ErrorBars> ParseErrorBars(const std::string& name) {
  if (name == "none") return ErrorBars::kNone;
  if (name == "minmax") return ErrorBars::kMinMax;
  if (name == "ci95") return ErrorBars::kCi95;
  return InvalidArgumentError("--bars: expected none, minmax or ci95, got '" + name + "'");
}

std::vector<PlotSeries> PivotSeries(const Pivot& p, ErrorBars bars) {
  std::vector<PlotSeries> out;
  for (const std::string& s : p.series) {
    PlotSeries ps{s, {}};
    for (double x : p.xs) {
      auto it = p.cells.find({s, x});
      if (it == p.cells.end()) continue;
      PlotPoint pt{x, it->second, it->second, it->second, false};
      auto sp = p.spread.find({s, x});
      if (bars != ErrorBars::kNone && sp != p.spread.end() && sp->second.n > 1) {
        const CellSpread& c = sp->second;
        pt.has_bar = true;
        if (bars == ErrorBars::kMinMax) {
          pt.lo = c.min;
          pt.hi = c.max;
        } else {
          const double half = StudentT975(c.n - 1) * c.sd / std::sqrt(static_cast<double>(c.n));
          pt.lo = pt.y - half;
          pt.hi = pt.y + half;
        }
      }
      ps.points.push_back(pt);
    }
    out.push_back(std::move(ps));
  }
  return out;
}

}  // namespace sloserve

#include "sloserve/policy/selection/response_latency_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "sloserve/core/declared_key.h"

namespace sloserve {

std::string ResponseLatencyTable::Header() {
  return "variant,workers,slo_ms,load_qps,p99_ms,violation_rate";
}

std::string ResponseLatencyTable::Format(const ResponseLatencyRow& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s,%d,%g,%g,%.3f,%.6f", r.variant.c_str(), r.workers, r.slo_ms,
                r.load_qps, r.p99_ms, r.violation_rate);
  return buf;
}

void ResponseLatencyTable::Add(ResponseLatencyRow row) {
  rows_.push_back(row);
  auto& list = by_variant_[row.variant];
  list.push_back(std::move(row));
  std::sort(list.begin(), list.end(), [](const ResponseLatencyRow& a, const ResponseLatencyRow& b) {
    if (a.slo_ms != b.slo_ms) return a.slo_ms < b.slo_ms;
    if (a.workers != b.workers) return a.workers < b.workers;
    return a.load_qps < b.load_qps;
  });
}

StatusOr<ResponseLatencyTable> ResponseLatencyTable::Parse(const std::string& text,
                                                           const std::string& origin) {
  ResponseLatencyTable t;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      if (line != Header()) {
        return InvalidArgumentError(origin + ":" + std::to_string(lineno) + ": expected header '" +
                                    Header() + "'");
      }
      header = true;
      continue;
    }
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    auto bad = [&](const std::string& what) {
      return InvalidArgumentError(origin + ":" + std::to_string(lineno) + ": " + what);
    };
    if (f.size() != 6) return bad("expected 6 fields, got " + std::to_string(f.size()));
    ResponseLatencyRow r;
    r.variant = f[0];
    double nums[5];
    const char* names[5] = {"workers", "slo_ms", "load_qps", "p99_ms", "violation_rate"};
    for (int i = 0; i < 5; ++i) {
      const std::optional<double> v = ParseNumber(f[static_cast<size_t>(i) + 1]);
      nums[i] = v.value_or(-1);
      if (!v || *v < 0) {
        return bad(std::string("field '") + names[i] + "': expected a non-negative number, got \"" +
                   f[static_cast<size_t>(i) + 1] + "\"");
      }
    }
    r.workers = static_cast<int>(nums[0]);
    r.slo_ms = nums[1];
    r.load_qps = nums[2];
    r.p99_ms = nums[3];
    r.violation_rate = nums[4];
    if (r.variant.empty()) return bad("field 'variant' is empty");
    t.Add(std::move(r));
  }
  if (t.rows_.empty()) return InvalidArgumentError(origin + ": no measurements");
  return t;
}

StatusOr<ResponseLatencyTable> ResponseLatencyTable::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open response-latency table");
  std::stringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), path);
}

double ResponseLatencyTable::P99At(const std::string& variant, int workers, double slo_ms,
                                   double load_qps) const {
  auto it = by_variant_.find(variant);
  if (it == by_variant_.end()) return -1;
  const auto& rows = it->second;
  // The measured SLO closest to the query's.
  double slo = rows.front().slo_ms;
  for (const auto& r : rows) {
    if (std::fabs(r.slo_ms - slo_ms) < std::fabs(slo - slo_ms)) slo = r.slo_ms;
  }
  // The largest measured worker count <= workers (fewer workers: conservative), else the smallest.
  int w = -1, smallest = -1;
  for (const auto& r : rows) {
    if (r.slo_ms != slo) continue;
    if (smallest < 0 || r.workers < smallest) smallest = r.workers;
    if (r.workers <= workers && r.workers > w) w = r.workers;
  }
  if (w < 0) w = smallest;
  for (const auto& r : rows) {  // sorted by load within (slo, workers)
    if (r.slo_ms == slo && r.workers == w && r.load_qps >= load_qps) return r.p99_ms;
  }
  return -1;
}

}  // namespace sloserve

#include "sloserve/report/model_table.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "sloserve/report/run_table.h"

namespace sloserve {

std::vector<nlohmann::json> RunRowsJson(const RunResult& r, size_t index) {
  nlohmann::json total = RunRowJson(r);
  if (r.models.empty()) return {total};
  total["model"] = "all";
  total["run"] = index;
  // The suite each model comes from (docs/multi-model.md): its own or the run's. The
  // total names each once, "a+b", the run's first when a model takes it.
  std::vector<std::string> suites;
  std::vector<std::string> distinct;
  for (const ModelSpec& m : r.spec.models) {
    suites.push_back(m.suite.empty() ? r.spec.suite : m.suite);
    if (m.suite.empty() && distinct.empty()) distinct.push_back(r.spec.suite);
  }
  for (const std::string& s : suites) {
    if (std::find(distinct.begin(), distinct.end(), s) == distinct.end()) distinct.push_back(s);
  }
  if (!distinct.empty()) {
    std::string all = distinct[0];
    for (size_t i = 1; i < distinct.size(); ++i) all += "+" + distinct[i];
    total["suite"] = all;
  }
  std::vector<nlohmann::json> rows = {total};
  for (size_t i = 0; i < r.models.size(); ++i) {
    const ModelResult& m = r.models[i];
    nlohmann::json row = total;
    row.update(SummaryJson(m.summary));
    if (i < suites.size()) row["suite"] = suites[i];
    row["model"] = m.name;
    row["task"] = m.task;
    row["load_qps"] = m.load_qps;
    row["share"] = m.share;
    row["slo_ms"] = ToMillis(m.slo);
    row["priority"] = m.priority;
    row["model_policy"] = m.policy;
    row.erase("events");
    row.erase("wall_s");
    rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::json RunsWithModelsJson(const std::string& experiment, const std::vector<RunResult>& runs,
                                  bool include_series) {
  nlohmann::json out = RunsJson(experiment, runs, include_series);
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    for (nlohmann::json& row : RunRowsJson(runs[i], i)) rows.push_back(std::move(row));
  }
  out["rows"] = std::move(rows);
  return out;
}

std::string ModelTables(const std::vector<RunResult>& runs) {
  std::ostringstream out;
  char buf[256];
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    if (r.models.empty()) continue;
    out << "\nrun " << i + 1 << ": " << r.spec.policy.Label();
    for (const auto& [k, v] : r.spec.labels) out << ", " << k << "=" << v;
    out << " (" << r.models.size() << " models)\n";
    size_t width = 5;
    for (const ModelResult& m : r.models) width = std::max(width, m.name.size());
    std::snprintf(buf, sizeof buf, "%-*s  %8s  %7s  %8s  %7s  %7s  %9s  %9s  %5s  %6s  %6s\n",
                  static_cast<int>(width), "model", "load_qps", "slo_ms", "arrived", "viol",
                  "finish", "p50_ms", "p99_ms", "cold", "waited", "reload");
    out << buf;
    for (const ModelResult& m : r.models) {
      const MetricsSummary& s = m.summary;
      std::snprintf(buf, sizeof buf,
                    "%-*s  %8.2f  %7.0f  %8lld  %7.4f  %7.4f  %9.1f  %9.1f  %5lld  %6lld  %6lld\n",
                    static_cast<int>(width), m.name.c_str(), m.load_qps, ToMillis(m.slo),
                    static_cast<long long>(s.arrived), s.violation_rate, s.finish_rate, s.p50_ms,
                    s.p99_ms, static_cast<long long>(s.cold_starts),
                    static_cast<long long>(s.cold_starts_waited),
                    static_cast<long long>(s.reloads));
      out << buf;
    }
  }
  return out.str();
}

}  // namespace sloserve

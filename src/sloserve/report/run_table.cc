#include "sloserve/report/run_table.h"

#include <cstdio>
#include <sstream>

namespace sloserve {
namespace {

std::string ArrivalLabel(const ArrivalSpec& a) { return a.kind; }

// Columns of the text table and CSV: (header, JSON field, printf format).
struct Column {
  const char* header;
  const char* field;
  const char* format;
};
const Column kColumns[] = {
    {"policy", "policy", "%s"},          {"load_qps", "load_qps", "%.0f"},
    {"workers", "workers", "%d"},        {"slo_ms", "slo_ms", "%.0f"},
    {"seed", "seed", "%d"},              {"accuracy", "accuracy", "%.3f"},
    {"viol", "violation_rate", "%.4f"},  {"finish", "finish_rate", "%.4f"},
    {"tput_qps", "throughput_qps", "%.1f"}, {"p50_ms", "p50_ms", "%.1f"},
    {"p95_ms", "p95_ms", "%.1f"},        {"p99_ms", "p99_ms", "%.1f"},
    {"batch", "mean_batch_size", "%.2f"},  {"util", "utilization", "%.3f"},
    {"$/h", "cost_per_hour", "%.2f"},    {"cold", "cold_starts", "%d"},
};

std::string Cell(const nlohmann::json& row, const Column& c) {
  const nlohmann::json& v = row[c.field];
  char buf[64];
  if (v.is_string()) return v.get<std::string>();
  if (std::string(c.format) == "%d") {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v.get<double>()));
  } else {
    std::snprintf(buf, sizeof buf, c.format, v.get<double>());
  }
  return buf;
}

}  // namespace

nlohmann::json RunRowJson(const RunResult& r) {
  const RunSpec& s = r.spec;
  const MetricsSummary& m = r.summary;
  nlohmann::json row;
  // parameters
  row["policy"] = s.policy.Label();
  row["dispatch"] = s.policy.dispatch;
  row["batching"] = s.policy.batching;
  row["selection"] = s.policy.selection;
  row["suite"] = s.suite;
  row["task"] = s.task;
  row["hardware"] = s.hardware;
  row["workers"] = s.workers;
  row["slo_ms"] = ToMillis(s.slo);
  row["seed"] = s.seed;
  row["arrival"] = ArrivalLabel(s.arrival);
  row["load_qps"] = r.load_qps;
  row["latency_mode"] = s.service.mode == ServiceTimeOptions::Mode::kSample
                            ? std::string("sample")
                            : "p" + std::to_string(s.service.quantile * 100).substr(0, 4);
  for (const auto& [k, v] : s.policy.options) row["policy." + k] = v;
  for (const auto& [k, v] : s.labels) {
    if (!row.contains(k)) row[k] = v;
  }
  // metrics
  row["accuracy"] = m.accuracy;
  row["violation_rate"] = m.violation_rate;
  row["finish_rate"] = m.finish_rate;
  row["throughput_qps"] = m.throughput_qps;
  row["p50_ms"] = m.p50_ms;
  row["p95_ms"] = m.p95_ms;
  row["p99_ms"] = m.p99_ms;
  row["max_ms"] = m.max_ms;
  row["mean_ms"] = m.mean_ms;
  row["mean_queue_ms"] = m.mean_queue_ms;
  row["mean_batch_size"] = m.mean_batch_size;
  row["utilization"] = m.utilization;
  row["cost_per_hour"] = m.cost_per_hour;
  row["cost_usd"] = m.cost_usd;
  row["core_seconds"] = m.core_seconds;
  row["cold_starts"] = m.cold_starts;
  row["arrived"] = m.arrived;
  row["completed"] = m.completed;
  row["met"] = m.met;
  row["late"] = m.late;
  row["dropped"] = m.dropped;
  row["batches"] = m.batches;
  row["elapsed_s"] = m.elapsed_s;
  row["events"] = r.events;
  row["wall_s"] = r.wall_s;
  return row;
}

nlohmann::json RunsJson(const std::string& experiment, const std::vector<RunResult>& runs,
                        bool include_series) {
  nlohmann::json out;
  out["experiment"] = experiment;
  out["rows"] = nlohmann::json::array();
  for (const RunResult& r : runs) out["rows"].push_back(RunRowJson(r));
  if (include_series) {
    nlohmann::json series = nlohmann::json::array();
    for (size_t i = 0; i < runs.size(); ++i) {
      const RunResult& r = runs[i];
      for (size_t k = 0; k < r.series.size(); ++k) {
        const IntervalStats& s = r.series[k];
        series.push_back({{"run", i},
                          {"policy", r.spec.policy.Label()},
                          {"t_s", ToSeconds(r.series_interval) * static_cast<double>(k)},
                          {"arrived", s.arrived},
                          {"completed", s.completed},
                          {"met", s.met},
                          {"late", s.late},
                          {"dropped", s.dropped},
                          {"accuracy", s.met > 0 ? s.accuracy_sum / static_cast<double>(s.met) : 0.0}});
      }
    }
    out["series"] = std::move(series);
  }
  return out;
}

std::string RunsTable(const std::vector<RunResult>& runs) {
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width;
  for (const Column& c : kColumns) width.push_back(std::string(c.header).size());
  for (const RunResult& r : runs) {
    nlohmann::json row = RunRowJson(r);
    std::vector<std::string> line;
    for (size_t i = 0; i < std::size(kColumns); ++i) {
      line.push_back(Cell(row, kColumns[i]));
      width[i] = std::max(width[i], line.back().size());
    }
    cells.push_back(std::move(line));
  }
  std::ostringstream out;
  auto emit = [&](const std::vector<std::string>& line) {
    for (size_t i = 0; i < line.size(); ++i) {
      if (i) out << "  ";
      out << std::string(width[i] - line[i].size(), ' ') << line[i];
    }
    out << "\n";
  };
  std::vector<std::string> header;
  for (const Column& c : kColumns) header.push_back(c.header);
  emit(header);
  for (const auto& line : cells) emit(line);
  return out.str();
}

std::string RunsCsv(const std::vector<RunResult>& runs) {
  std::ostringstream out;
  for (size_t i = 0; i < std::size(kColumns); ++i) out << (i ? "," : "") << kColumns[i].field;
  out << "\n";
  for (const RunResult& r : runs) {
    nlohmann::json row = RunRowJson(r);
    for (size_t i = 0; i < std::size(kColumns); ++i) out << (i ? "," : "") << Cell(row, kColumns[i]);
    out << "\n";
  }
  return out.str();
}

}  // namespace sloserve

#include "sloserve/report/run_table.h"

#include <cstdio>
#include <sstream>

namespace sloserve {
namespace {

std::string ArrivalLabel(const ArrivalSpec& a) {
  return a.kind;
}

// 0.95 -> "p95", 0.999 -> "p99.9".
std::string QuantileLabel(double q) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%g", q * 100);
  return buf;
}

// Columns of the text table and CSV: (header, JSON field, printf format).
struct Column {
  const char* header;
  const char* field;
  const char* format;
};
const Column kColumns[] = {
    {"policy", "policy", "%s"},
    {"load_qps", "load_qps", "%.0f"},
    {"workers", "workers", "%d"},
    {"slo_ms", "slo_ms", "%.0f"},
    {"seed", "seed", "%d"},
    {"accuracy", "accuracy", "%.3f"},
    {"viol", "violation_rate", "%.4f"},
    {"finish", "finish_rate", "%.4f"},
    {"tput_qps", "throughput_qps", "%.1f"},
    {"p50_ms", "p50_ms", "%.1f"},
    {"p95_ms", "p95_ms", "%.1f"},
    {"p99_ms", "p99_ms", "%.1f"},
    {"batch", "mean_batch_size", "%.2f"},
    {"util", "utilization", "%.3f"},
    {"$/h", "cost_per_hour", "%.2f"},
    {"cold", "cold_starts", "%d"},
    {"shed", "shed", "%d"},
    {"goodput", "goodput_qps", "%.1f"},
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

nlohmann::json SummaryJson(const MetricsSummary& m) {
  nlohmann::json j = {{"accuracy", m.accuracy},
                      {"violation_rate", m.violation_rate},
                      {"finish_rate", m.finish_rate},
                      {"throughput_qps", m.throughput_qps},
                      {"p50_ms", m.p50_ms},
                      {"p95_ms", m.p95_ms},
                      {"p99_ms", m.p99_ms},
                      {"max_ms", m.max_ms},
                      {"mean_ms", m.mean_ms},
                      {"mean_queue_ms", m.mean_queue_ms},
                      {"mean_batch_size", m.mean_batch_size},
                      {"utilization", m.utilization},
                      {"cost_per_hour", m.cost_per_hour},
                      {"cost_usd", m.cost_usd},
                      {"core_seconds", m.core_seconds},
                      {"cold_starts", m.cold_starts},
                      {"reloads", m.reloads},
                      {"cold_starts_waited", m.cold_starts_waited},
                      {"arrived", m.arrived},
                      {"completed", m.completed},
                      {"met", m.met},
                      {"late", m.late},
                      {"dropped", m.dropped},
                      {"shed", m.shed},
                      {"expired", m.expired},
                      {"cancelled", m.cancelled},
                      {"admitted", m.admitted},
                      {"admitted_met_rate", m.admitted_met_rate},
                      {"goodput_qps", m.goodput_qps},
                      {"batches", m.batches},
                      {"elapsed_s", m.elapsed_s}};
  // serve's refusals of malformed requests (too many rows), only when there were some.
  if (m.bad_requests > 0) j["bad_requests"] = m.bad_requests;
  // serve's latency phases (metrics.h), when kept.
  if (m.phases.count > 0) {
    nlohmann::json phases = {{"count", m.phases.count}};
    for (const auto& [name, p] :
         {std::pair<const char*, const PhaseStats*>{"queue", &m.phases.queue},
          {"exec", &m.phases.exec},
          {"handoff", &m.phases.handoff}}) {
      phases[name] = {{"p50_ms", p->p50_ms},
                      {"p99_ms", p->p99_ms},
                      {"mean_ms", p->mean_ms},
                      {"max_ms", p->max_ms}};
    }
    j["phases"] = phases;
  }
  // Per priority level (docs/admission.md), only when more than one level was seen.
  for (const PriorityStats& p : m.priorities) {
    j["priorities"].push_back({{"level", p.level},
                               {"arrived", p.arrived},
                               {"shed", p.shed},
                               {"met", p.met},
                               {"shed_rate", p.shed_rate},
                               {"admitted_met_rate", p.admitted_met_rate}});
  }
  return j;
}

std::string SummaryText(const MetricsSummary& m) {
  char buf[1024];
  std::snprintf(
      buf, sizeof buf,
      "queries     %lld arrived, %lld completed (%lld met SLO, %lld late), %lld dropped\n"
      "overload    %lld shed by admission, %lld expired before running, %lld cancelled; "
      "%.4f of admitted met the SLO, goodput %.1f queries/s\n"
      "slo         violation rate %.4f, finish rate %.4f\n"
      "accuracy    %.3f%% per satisfied query\n"
      "latency     p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, max %.2f ms (queue mean %.2f ms)\n"
      "throughput  %.1f queries/s over %.1f s, mean batch %.2f, utilization %.3f\n"
      "cost        $%.2f/h for the deployment, $%.4f for this run, %lld cold starts "
      "(%lld waited for, %lld reloads)\n",
      static_cast<long long>(m.arrived), static_cast<long long>(m.completed),
      static_cast<long long>(m.met), static_cast<long long>(m.late),
      static_cast<long long>(m.dropped), static_cast<long long>(m.shed),
      static_cast<long long>(m.expired), static_cast<long long>(m.cancelled), m.admitted_met_rate,
      m.goodput_qps, m.violation_rate, m.finish_rate, m.accuracy, m.p50_ms, m.p95_ms, m.p99_ms,
      m.max_ms, m.mean_queue_ms, m.throughput_qps, m.elapsed_s, m.mean_batch_size, m.utilization,
      m.cost_per_hour, m.cost_usd, static_cast<long long>(m.cold_starts),
      static_cast<long long>(m.cold_starts_waited), static_cast<long long>(m.reloads));
  std::string text = buf;
  if (m.bad_requests > 0) {
    std::snprintf(buf, sizeof buf,
                  "refused     %lld bad requests (more rows than any variant finishes within "
                  "the SLO; not counted as arrived or as SLO violations)\n",
                  static_cast<long long>(m.bad_requests));
    text += buf;
  }
  if (m.phases.count > 0) {
    const LatencyPhases& ph = m.phases;
    std::snprintf(buf, sizeof buf,
                  "phases      p50 / p99 / mean ms: queue %.3f / %.3f / %.3f, exec %.3f / %.3f / "
                  "%.3f, handoff %.3f / %.3f / %.3f\n",
                  ph.queue.p50_ms, ph.queue.p99_ms, ph.queue.mean_ms, ph.exec.p50_ms,
                  ph.exec.p99_ms, ph.exec.mean_ms, ph.handoff.p50_ms, ph.handoff.p99_ms,
                  ph.handoff.mean_ms);
    text += buf;
  }
  for (const PriorityStats& p : m.priorities) {
    std::snprintf(buf, sizeof buf,
                  "priority %d  %lld arrived, %lld shed (%.4f), %.4f of admitted met the SLO\n",
                  p.level, static_cast<long long>(p.arrived), static_cast<long long>(p.shed),
                  p.shed_rate, p.admitted_met_rate);
    text += buf;
  }
  return text;
}

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
                            : QuantileLabel(s.service.quantile);
  for (const auto& [k, v] : s.policy.options) row["policy." + k] = v;
  for (const auto& [k, v] : s.labels) {
    if (!row.contains(k)) row[k] = v;
  }
  row.update(SummaryJson(m));
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
        series.push_back(
            {{"run", i},
             {"policy", r.spec.policy.Label()},
             {"t_s", ToSeconds(r.series_interval) * static_cast<double>(k)},
             {"arrived", s.arrived},
             {"completed", s.completed},
             {"met", s.met},
             {"late", s.late},
             {"dropped", s.dropped},
             {"shed", s.shed},
             {"accuracy", s.met > 0 ? s.accuracy_sum / static_cast<double>(s.met) : 0.0},
             // mean cores provisioned over the interval (active and starting workers)
             {"cores", s.core_seconds / ToSeconds(r.series_interval)}});
        // p99 of the interval's completed queries, when the run computed it
        if (k < r.series_p99_ms.size()) series.back()["p99_ms"] = r.series_p99_ms[k];
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
    for (size_t i = 0; i < std::size(kColumns); ++i)
      out << (i ? "," : "") << Cell(row, kColumns[i]);
    out << "\n";
  }
  return out.str();
}

}  // namespace sloserve

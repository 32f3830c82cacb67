#include "sloserve/loadgen/multi_model_load.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <thread>

namespace sloserve {
namespace {

void AddCounts(std::map<std::string, int64_t, std::less<>>& into,
               const std::map<std::string, int64_t, std::less<>>& from) {
  for (const auto& [key, n] : from) into[key] += n;
}

}  // namespace

LoadReport MergeLoadReports(const std::vector<ModelLoadReport>& reports) {
  LoadReport t;
  if (reports.empty()) return t;
  std::vector<Duration> latencies;
  double rows = 0;
  bool same_sizes = true, every_slo = true, same_slo = true;
  for (const ModelLoadReport& m : reports) {
    const LoadReport& r = m.report;
    t.scheduled += r.scheduled;
    t.sent += r.sent;
    t.ok += r.ok;
    t.http_errors += r.http_errors;
    t.timeouts += r.timeouts;
    t.transport_errors += r.transport_errors;
    for (const auto& [status, n] : r.errors_by_status) t.errors_by_status[status] += n;
    for (const auto& e : r.error_examples) {
      if (t.error_examples.size() >= LoadReport::kMaxErrorExamples) break;
      const bool seen = std::any_of(
          t.error_examples.begin(), t.error_examples.end(),
          [&](const auto& x) { return x.status == e.status && x.message == e.message; });
      if (!seen) t.error_examples.push_back(e);
    }
    AddCounts(t.variant_counts, r.variant_counts);
    AddCounts(t.hardware_counts, r.hardware_counts);
    same_sizes = same_sizes && r.sizes == reports.front().report.sizes;
    rows += r.rows_mean * static_cast<double>(r.scheduled);
    t.duration = std::max(t.duration, r.duration);
    t.max_send_lag = std::max(t.max_send_lag, r.max_send_lag);
    t.offered_qps += r.offered_qps;
    latencies.insert(latencies.end(), r.ok_latencies.begin(), r.ok_latencies.end());
    every_slo = every_slo && r.slo_ms > 0;
    same_slo = same_slo && r.slo_ms == reports.front().report.slo_ms;
    t.met_client += r.met_client;
    t.met_server += r.met_server;
    t.peak_connections += r.peak_connections;
    t.labelled += r.labelled;
    t.correct += r.correct;
    ClientBottleneck& b = t.client_bottleneck;
    const ClientBottleneck& rb = r.client_bottleneck;
    b.send_lag_p99_ms = std::max(b.send_lag_p99_ms, rb.send_lag_p99_ms);
    b.send_lag_max_ms = std::max(b.send_lag_max_ms, rb.send_lag_max_ms);
    b.max_connections += rb.max_connections;
    b.waited_for_connection += rb.waited_for_connection;
    b.send_lag_exceeded = b.send_lag_exceeded || rb.send_lag_exceeded;
    b.connection_cap_reached = b.connection_cap_reached || rb.connection_cap_reached;
    for (const std::string& w : rb.warnings) b.warnings.push_back("model " + m.model + ": " + w);
  }
  t.client_bottleneck.slo_ms = same_slo ? reports.front().report.client_bottleneck.slo_ms : 0;
  t.client_bottleneck.send_lag_limit_ms = t.client_bottleneck.slo_ms * kSendLagSloFraction;
  t.sizes = same_sizes ? reports.front().report.sizes : "mixed";
  t.rows_mean = t.scheduled > 0 ? rows / static_cast<double>(t.scheduled) : 0;
  const double dur_s = ToSeconds(t.duration);
  t.achieved_qps = dur_s > 0 ? static_cast<double>(t.completed()) / dur_s : 0.0;
  std::sort(latencies.begin(), latencies.end());
  if (!latencies.empty()) {
    double sum = 0;
    for (Duration d : latencies) sum += ToMillis(d);
    t.latency_mean_ms = sum / static_cast<double>(latencies.size());
    t.latency_p50_ms = ToMillis(SortedPercentile(latencies, 0.50));
    t.latency_p95_ms = ToMillis(SortedPercentile(latencies, 0.95));
    t.latency_p99_ms = ToMillis(SortedPercentile(latencies, 0.99));
    t.latency_max_ms = ToMillis(latencies.back());
  }
  // Each request against its own model's SLO; a single figure only when every model has one.
  t.slo_ms = every_slo && same_slo ? reports.front().report.slo_ms : 0;
  if (t.sent > 0) {
    const auto sent = static_cast<double>(t.sent);
    t.slo_attainment_client = every_slo ? static_cast<double>(t.met_client) / sent : 0;
    t.slo_attainment_server = static_cast<double>(t.met_server) / sent;
  }
  t.ok_latencies = std::move(latencies);
  return t;
}

nlohmann::json MultiModelReport::ToJson() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const ModelLoadReport& m : models) {
    nlohmann::json j = m.report.ToJson();
    j["model"] = m.model;
    j["share"] = m.share;
    rows.push_back(std::move(j));
  }
  nlohmann::json total = this->total.ToJson();
  total["model"] = "total";
  return {{"models", std::move(rows)}, {"total", std::move(total)}};
}

std::string MultiModelReport::ToText() const {
  std::string out;
  char buf[256];
  for (const ModelLoadReport& m : models) {
    std::snprintf(buf, sizeof buf, "== model %s (share %.2f)\n", m.model.c_str(), m.share);
    out += buf;
    out += m.report.ToText();
  }
  out += "== total (" + std::to_string(models.size()) + " models)\n";
  out += total.ToText();
  return out;
}

StatusOr<MultiModelReport> RunMultiModelLoad(
    const std::vector<LoadOptions>& options, const std::vector<double>& shares,
    const std::function<void(size_t, const LoadProgress&)>& progress) {
  if (options.empty() || options.size() > kMaxLoadModels) {
    return InvalidArgumentError("loadgen: give 1.." + std::to_string(kMaxLoadModels) +
                                " models, got " + std::to_string(options.size()));
  }
  if (shares.size() != options.size()) return InvalidArgumentError("loadgen: one share per model");
  std::vector<std::optional<StatusOr<LoadReport>>> results(options.size());
  std::vector<std::thread> threads;
  threads.reserve(options.size());
  for (size_t i = 0; i < options.size(); ++i) {
    threads.emplace_back([&, i] {
      LoadProgressFn fn;
      if (progress) fn = [&, i](const LoadProgress& p) { progress(i, p); };
      results[i] = RunLoad(options[i], fn);
    });
  }
  for (std::thread& t : threads) t.join();
  MultiModelReport out;
  for (size_t i = 0; i < options.size(); ++i) {
    if (!results[i]->ok()) return results[i]->status().WithPrefix("model " + options[i].task);
    out.models.push_back({options[i].task, shares[i], std::move(*results[i]).value()});
  }
  out.total = MergeLoadReports(out.models);
  return out;
}

}  // namespace sloserve

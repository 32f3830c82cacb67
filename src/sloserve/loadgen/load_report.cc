#include "sloserve/loadgen/load_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sloserve {

Duration SortedPercentile(const std::vector<Duration>& sorted, double q) {
  if (sorted.empty()) return Duration::zero();
  q = std::clamp(q, 0.0, 1.0);
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[rank == 0 ? 0 : rank - 1];
}

namespace {

void Count(std::map<std::string, int64_t, std::less<>>& counts, std::string_view key) {
  auto it = counts.find(key);
  if (it == counts.end()) it = counts.emplace(std::string(key), 0).first;
  ++it->second;
}

}  // namespace

void LoadRecorder::RecordOk(Duration latency, std::string_view variant, bool met_slo, double slo_ms,
                            std::string_view hardware) {
  ++report_.ok;
  latencies_.push_back(latency);
  if (slo_ms > 0 && ToMillis(latency) <= slo_ms) ++met_client_;
  if (met_slo) ++met_server_;
  Count(report_.variant_counts, variant);
  if (!hardware.empty()) Count(report_.hardware_counts, hardware);
}

Duration LoadRecorder::SendLagP99(int64_t sends) const {
  const auto recorded = static_cast<int64_t>(send_lags_.size());
  sends = std::max(sends, recorded);
  if (sends == 0) return Duration::zero();
  // SortedPercentile's rank over `sends`, the unrecorded (zero) lags sorted first.
  const auto rank = static_cast<int64_t>(std::ceil(0.99 * static_cast<double>(sends)));
  const int64_t index = std::max<int64_t>(rank, 1) - 1 - (sends - recorded);
  if (index < 0) return Duration::zero();
  std::vector<Duration> lags = send_lags_;
  std::nth_element(lags.begin(), lags.begin() + index, lags.end());
  return lags[static_cast<size_t>(index)];
}

bool SendLagExceeded(double send_lag_p99_ms, double slo_ms) {
  return slo_ms > 0 && send_lag_p99_ms > slo_ms * kSendLagSloFraction;
}

void LoadRecorder::RecordSendLag(Duration lag) {
  lag = std::max(lag, Duration::zero());
  send_lags_.push_back(lag);
  report_.max_send_lag = std::max(report_.max_send_lag, lag);
}

void LoadRecorder::RecordHttpError(int status, std::string_view body) {
  ++report_.http_errors;
  ++report_.errors_by_status[status];
  auto& examples = report_.error_examples;
  if (examples.size() >= LoadReport::kMaxErrorExamples) return;
  // KServe v2 error bodies are {"error": "..."}; anything else is shown as it came.
  std::string message;
  const auto doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object() && doc.contains("error") && doc["error"].is_string()) {
    message = doc["error"].get<std::string>();
  } else {
    message = std::string(body.substr(0, 300));
  }
  for (char& c : message) {  // a server's text must not drive the terminal
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) c = '?';
  }
  for (const auto& e : examples) {
    if (e.status == status && e.message == message) return;
  }
  examples.push_back({status, std::move(message)});
}

LoadReport LoadRecorder::Finish(int64_t scheduled, int64_t sent, Duration duration,
                                Duration schedule_span, double slo_ms, int peak_connections) {
  LoadReport r = report_;
  r.scheduled = scheduled;
  r.sent = sent;
  r.duration = duration;
  r.slo_ms = slo_ms;
  r.peak_connections = peak_connections;
  const double span_s = ToSeconds(schedule_span);
  r.offered_qps = span_s > 0 ? static_cast<double>(scheduled - 1) / span_s : 0.0;
  const double dur_s = ToSeconds(duration);
  r.achieved_qps = dur_s > 0 ? static_cast<double>(r.completed()) / dur_s : 0.0;
  std::vector<Duration> sorted = latencies_;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) {
    double sum = 0;
    for (Duration d : sorted) sum += ToMillis(d);
    r.latency_mean_ms = sum / static_cast<double>(sorted.size());
    r.latency_p50_ms = ToMillis(SortedPercentile(sorted, 0.50));
    r.latency_p95_ms = ToMillis(SortedPercentile(sorted, 0.95));
    r.latency_p99_ms = ToMillis(SortedPercentile(sorted, 0.99));
    r.latency_max_ms = ToMillis(sorted.back());
  }
  r.client_bottleneck.send_lag_p99_ms =
      ToMillis(SendLagP99(static_cast<int64_t>(send_lags_.size())));
  r.client_bottleneck.send_lag_max_ms = ToMillis(r.max_send_lag);
  if (sent > 0) {
    r.slo_attainment_client = static_cast<double>(met_client_) / static_cast<double>(sent);
    r.slo_attainment_server = static_cast<double>(met_server_) / static_cast<double>(sent);
  }
  r.met_client = met_client_;
  r.met_server = met_server_;
  r.ok_latencies = std::move(sorted);
  return r;
}

void AssessClientBottleneck(LoadReport& report, double slo_ms, int max_connections) {
  ClientBottleneck& b = report.client_bottleneck;
  b.slo_ms = slo_ms > 0 ? slo_ms : 0;
  b.send_lag_limit_ms = b.slo_ms * kSendLagSloFraction;
  b.max_connections = max_connections;
  b.send_lag_exceeded = SendLagExceeded(b.send_lag_p99_ms, b.slo_ms);
  b.connection_cap_reached = b.waited_for_connection > 0;
  b.warnings.clear();
  char buf[512];
  if (b.send_lag_exceeded) {
    std::snprintf(buf, sizeof(buf),
                  "client is the bottleneck: p99 send lag %.2f ms exceeds %.0f%% of the %.1f ms "
                  "SLO (%.2f ms); latencies include time the requests waited inside loadgen",
                  b.send_lag_p99_ms, 100 * kSendLagSloFraction, b.slo_ms, b.send_lag_limit_ms);
    b.warnings.emplace_back(buf);
  }
  if (b.connection_cap_reached) {
    std::snprintf(buf, sizeof(buf),
                  "client is the bottleneck: connection cap reached (%d connections busy); %lld "
                  "requests waited for a free connection (raise --max-connections)",
                  max_connections, static_cast<long long>(b.waited_for_connection));
    b.warnings.emplace_back(buf);
  }
}

nlohmann::json ClientBottleneck::ToJson() const {
  return {
      {"send_lag_p99_ms", send_lag_p99_ms},
      {"send_lag_max_ms", send_lag_max_ms},
      {"slo_ms", slo_ms > 0 ? nlohmann::json(slo_ms) : nlohmann::json(nullptr)},
      {"send_lag_limit_ms",
       slo_ms > 0 ? nlohmann::json(send_lag_limit_ms) : nlohmann::json(nullptr)},
      {"send_lag_exceeded", send_lag_exceeded},
      {"max_connections", max_connections},
      {"waited_for_connection", waited_for_connection},
      {"connection_cap_reached", connection_cap_reached},
      {"warnings", warnings},
  };
}

nlohmann::json LoadReport::ToJson() const {
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [status, n] : errors_by_status) errors[std::to_string(status)] = n;
  nlohmann::json examples = nlohmann::json::array();
  for (const auto& e : error_examples)
    examples.push_back({{"status", e.status}, {"message", e.message}});
  nlohmann::json variants = nlohmann::json::object();
  for (const auto& [variant, n] : variant_counts) variants[variant] = n;
  nlohmann::json hardware = nlohmann::json::object();
  for (const auto& [type, n] : hardware_counts) hardware[type] = n;
  nlohmann::json j = {
      {"scheduled", scheduled},
      {"sent", sent},
      {"ok", ok},
      {"http_errors", http_errors},
      {"timeouts", timeouts},
      {"transport_errors", transport_errors},
      {"errors_by_status", std::move(errors)},
      {"error_examples", std::move(examples)},
      {"variant_counts", std::move(variants)},
      {"hardware_counts", std::move(hardware)},
      {"sizes", sizes},
      {"rows_mean", rows_mean},
      {"duration_s", ToSeconds(duration)},
      {"max_send_lag_ms", ToMillis(max_send_lag)},
      {"offered_qps", offered_qps},
      {"achieved_qps", achieved_qps},
      {"latency_ms",
       {{"mean", latency_mean_ms},
        {"p50", latency_p50_ms},
        {"p95", latency_p95_ms},
        {"p99", latency_p99_ms},
        {"max", latency_max_ms}}},
      {"slo_attainment_server", slo_attainment_server},
      {"peak_connections", peak_connections},
      {"client_bottleneck", client_bottleneck.ToJson()},
  };
  if (labelled > 0) {
    j["labelled"] = labelled;
    j["correct"] = correct;
    j["accuracy_measured"] = 100.0 * static_cast<double>(correct) / static_cast<double>(labelled);
  }
  if (slo_ms > 0) {
    j["slo_ms"] = slo_ms;
    j["slo_attainment_client"] = slo_attainment_client;
  } else {
    j["slo_ms"] = nullptr;
    j["slo_attainment_client"] = nullptr;
  }
  return j;
}

std::string LoadReport::ToText() const {
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof(buf),
                "requests   scheduled %lld  sent %lld  ok %lld  http errors %lld  timeouts %lld  "
                "transport errors %lld\n",
                static_cast<long long>(scheduled), static_cast<long long>(sent),
                static_cast<long long>(ok), static_cast<long long>(http_errors),
                static_cast<long long>(timeouts), static_cast<long long>(transport_errors));
  out += buf;
  if (!errors_by_status.empty()) {
    out += "errors     ";
    for (const auto& [status, n] : errors_by_status) {
      out += "HTTP " + std::to_string(status) + ": " + std::to_string(n) + "  ";
    }
    out += "\n";
    for (const auto& e : error_examples) {
      out += "  first HTTP " + std::to_string(e.status) + ": " + e.message + "\n";
    }
  }
  std::snprintf(buf, sizeof(buf),
                "rate       offered %.1f qps  achieved %.1f qps  over %.3f s  (max send lag "
                "%.2f ms, peak connections %d)\n",
                offered_qps, achieved_qps, ToSeconds(duration), ToMillis(max_send_lag),
                peak_connections);
  out += buf;
  std::snprintf(buf, sizeof(buf), "latency ms mean %.2f  p50 %.2f  p95 %.2f  p99 %.2f  max %.2f\n",
                latency_mean_ms, latency_p50_ms, latency_p95_ms, latency_p99_ms, latency_max_ms);
  out += buf;
  if (slo_ms > 0) {
    std::snprintf(buf, sizeof(buf), "slo        %.1f ms  attainment client %.2f%%  server %.2f%%\n",
                  slo_ms, 100 * slo_attainment_client, 100 * slo_attainment_server);
  } else {
    std::snprintf(buf, sizeof(buf), "slo        server default  attainment server %.2f%%\n",
                  100 * slo_attainment_server);
  }
  out += buf;
  if (labelled > 0) {
    std::snprintf(buf, sizeof(buf),
                  "accuracy   %.2f%% measured from the responses (%lld of %lld labelled correct)\n",
                  100.0 * static_cast<double>(correct) / static_cast<double>(labelled),
                  static_cast<long long>(correct), static_cast<long long>(labelled));
    out += buf;
  }
  if (!sizes.empty()) {
    std::snprintf(buf, sizeof(buf), "sizes      %s  (mean %.1f rows per request)\n", sizes.c_str(),
                  rows_mean);
    out += buf;
  }
  if (!variant_counts.empty()) {
    out += "variants   ";
    for (const auto& [variant, n] : variant_counts) {
      out += variant + ": " + std::to_string(n) + "  ";
    }
    out += "\n";
  }
  if (!hardware_counts.empty()) {
    out += "hardware   ";
    for (const auto& [type, n] : hardware_counts) out += type + ": " + std::to_string(n) + "  ";
    out += "\n";
  }
  for (const std::string& w : client_bottleneck.warnings) out += "WARNING    " + w + "\n";
  return out;
}

}  // namespace sloserve

#include "sloserve/server/server_metrics.h"

namespace sloserve {

void ServerMetrics::RecordResponse(int http_status) {
  if (http_status < kMinStatus || http_status > kMaxStatus) http_status = 500;
  by_status_[http_status - kMinStatus].fetch_add(1, std::memory_order_relaxed);
}

int64_t ServerMetrics::ResponsesWithStatus(int http_status) const {
  if (http_status < kMinStatus || http_status > kMaxStatus) return 0;
  return by_status_[http_status - kMinStatus].load(std::memory_order_relaxed);
}

int64_t ServerMetrics::TotalResponses() const {
  int64_t total = 0;
  for (const auto& c : by_status_) total += c.load(std::memory_order_relaxed);
  return total;
}

std::string ServerMetrics::RenderPrometheus() const {
  std::string out;
  out.reserve(1024);
  out +=
      "# HELP sloserve_http_responses_total HTTP responses sent, by status code.\n"
      "# TYPE sloserve_http_responses_total counter\n";
  for (int status = kMinStatus; status <= kMaxStatus; ++status) {
    const int64_t n = by_status_[status - kMinStatus].load(std::memory_order_relaxed);
    if (n == 0) continue;
    out += "sloserve_http_responses_total{code=\"" + std::to_string(status) + "\"} " +
           std::to_string(n) + "\n";
  }
  out +=
      "# HELP sloserve_http_connections_open Open client connections.\n"
      "# TYPE sloserve_http_connections_open gauge\n"
      "sloserve_http_connections_open " +
      std::to_string(OpenConnections()) +
      "\n"
      "# HELP sloserve_http_infer_in_flight Inference requests submitted to the backend and not "
      "yet answered.\n"
      "# TYPE sloserve_http_infer_in_flight gauge\n"
      "sloserve_http_infer_in_flight " +
      std::to_string(InferInFlight()) +
      "\n"
      "# HELP sloserve_http_read_timeouts_total Connections closed because a request's header "
      "or body arrived too slowly.\n"
      "# TYPE sloserve_http_read_timeouts_total counter\n"
      "sloserve_http_read_timeouts_total " +
      std::to_string(ReadTimeouts()) +
      "\n"
      "# HELP sloserve_http_connections_evicted_total Connections that never delivered a whole "
      "request, or idle keep-alive ones, closed to make room for a new one at "
      "server.max_connections.\n"
      "# TYPE sloserve_http_connections_evicted_total counter\n"
      "sloserve_http_connections_evicted_total " +
      std::to_string(EvictedConnections()) + "\n";
  if (tls_) {
    out +=
        "# HELP sloserve_http_tls_handshake_failures_total HTTPS connections closed because "
        "their TLS handshake failed.\n"
        "# TYPE sloserve_http_tls_handshake_failures_total counter\n"
        "sloserve_http_tls_handshake_failures_total " +
        std::to_string(TlsHandshakeFailures()) + "\n";
  }
  return out;
}

}  // namespace sloserve

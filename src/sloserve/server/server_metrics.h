#pragma once
// Frontend counters exported on GET /metrics in the Prometheus text format. All updates
// are lock-free (relaxed atomics); rendering reads a consistent-enough snapshot.
#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace sloserve {

class ServerMetrics {
 public:
  void RecordResponse(int http_status);
  void ConnectionOpened() { connections_open_.fetch_add(1, std::memory_order_relaxed); }
  void ConnectionClosed() { connections_open_.fetch_sub(1, std::memory_order_relaxed); }
  void InferStarted() { infer_in_flight_.fetch_add(1, std::memory_order_relaxed); }
  void InferFinished() { infer_in_flight_.fetch_sub(1, std::memory_order_relaxed); }
  // A connection closed because its request's header or body came in too slowly.
  void ReadTimedOut() { read_timeouts_.fetch_add(1, std::memory_order_relaxed); }
  // A connection that never delivered a whole request closed to make room for a new one
  // at server.max_connections.
  void ConnectionEvicted() { evicted_.fetch_add(1, std::memory_order_relaxed); }
  // HTTPS: a connection whose TLS handshake failed (plain HTTP on the port, no or a wrong
  // client certificate, a client that does not trust ours, or too slow).
  void TlsHandshakeFailed() { tls_failed_.fetch_add(1, std::memory_order_relaxed); }

  int64_t ResponsesWithStatus(int http_status) const;
  int64_t TotalResponses() const;
  int64_t OpenConnections() const { return connections_open_.load(std::memory_order_relaxed); }
  int64_t InferInFlight() const { return infer_in_flight_.load(std::memory_order_relaxed); }
  int64_t ReadTimeouts() const { return read_timeouts_.load(std::memory_order_relaxed); }
  int64_t EvictedConnections() const { return evicted_.load(std::memory_order_relaxed); }
  int64_t TlsHandshakeFailures() const { return tls_failed_.load(std::memory_order_relaxed); }

  // sloserve_http_responses_total{code="..."}, sloserve_http_connections_open,
  // sloserve_http_infer_in_flight, sloserve_http_read_timeouts_total,
  // sloserve_http_connections_evicted_total, and over HTTPS
  // sloserve_http_tls_handshake_failures_total.
  std::string RenderPrometheus() const;
  // The server speaks HTTPS: the handshake failure counter is rendered too.
  void EnableTlsMetrics() { tls_ = true; }

 private:
  static constexpr int kMinStatus = 100;
  static constexpr int kMaxStatus = 599;
  std::array<std::atomic<int64_t>, kMaxStatus - kMinStatus + 1> by_status_{};
  std::atomic<int64_t> connections_open_{0};
  std::atomic<int64_t> infer_in_flight_{0};
  std::atomic<int64_t> read_timeouts_{0};
  std::atomic<int64_t> evicted_{0};
  std::atomic<int64_t> tls_failed_{0};
  bool tls_ = false;  // set before serving
};

}  // namespace sloserve

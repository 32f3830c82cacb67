#pragma once
// `sloserve serve`'s keys (server.*), declared here next to the parse that reads them into
// a typed ServerConfig (docs/config.md, docs/serve.md). serve_setup turns the struct into
// the HTTP, gRPC and worker options; nothing else reads server.* text.
#include <optional>
#include <string>
#include <vector>

#include "sloserve/config/flat_config.h"
#include "sloserve/core/declared_key.h"

namespace sloserve {

struct ServerConfig {
  std::string host;
  int port = 8000;
  std::optional<int> threads;  // unset: HttpServer::DefaultThreads()
  double max_body_mb = 16;
  double max_slo_ms = 60000;
  int64_t max_queue = 100000;
  std::string input_shape;  // "" = the profile's
  double payload_mb = 256;
  int64_t max_connections = 10000;
  double drain_s = 5;
  double idle_timeout_s = 60;
  double header_timeout_s = 10;
  double body_timeout_s = 10;
  double min_body_rate_kib = 64;
  double inflight_body_mb = 256;
  int grpc_port = 0;                // 0 = no gRPC endpoint
  std::optional<int> grpc_threads;  // unset: 2, or 1 with remote workers
  int64_t grpc_max_in_flight = 10000;
  std::string remote_workers;       // "host:port,..." or "dns:///NAME:PORT" (elastic)
  std::string remote_workers_file;  // elastic: HOST:PORT lines, re-read when they change
  int64_t remote_worker_slots = 16;
  double remote_health_interval_ms = 200;
  double remote_health_timeout_ms = 500;
  int remote_failures_to_down = 2;
  double remote_call_timeout_ms = 5000;
  double remote_connect_timeout_s = 30;
  double remote_reconnect_backoff_ms = 1000;
  std::string kserve_workers;
  std::string kserve_model;
  bool early_shed = true;
  std::optional<std::vector<double>> latency_buckets;  // seconds; unset: dense at the SLOs
  std::string model_control = "none";
  std::string admin_token_file;
  bool require_token_for_infer = false;
  bool require_token_for_metrics = false;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  std::string worker_run_transport = "grpc";  // grpc | tcp
  std::string worker_tls_ca_file;
  std::string worker_tls_cert_file;
  std::string worker_tls_key_file;
};

const std::vector<const KeyDecl*>& ServerKeys();
// Reads every server.* key of `flat` (other keys are not looked at).
StatusOr<ServerConfig> ParseServerConfig(const FlatConfig& flat);

}  // namespace sloserve

#include "sloserve/config/server_config.h"

namespace sloserve {
namespace {

using T = KeyType;

const KeyDecl kHost{.name = "server.host",
                    .type = T::kString,
                    .default_value = "127.0.0.1",
                    .help = "address the HTTP and gRPC servers bind (0.0.0.0: every interface)"};
const KeyDecl kPort{.name = "server.port",
                    .type = T::kInteger,
                    .default_value = "8000",
                    .min = 0,
                    .max = 65535,
                    .help = "HTTP port (0 = any free port)"};
const KeyDecl kThreads{.name = "server.threads",
                       .type = T::kInteger,
                       .min = 1,
                       .max = 256,
                       .help = "HTTP io threads (default: the cores, at most 16)"};
const KeyDecl kMaxBodyMb{.name = "server.max_body_mb",
                         .type = T::kNumber,
                         .default_value = "16",
                         .unit = "MiB",
                         .min = 0.001,
                         .max = 4096,
                         .help = "largest request body (HTTP) or message (gRPC)"};
const KeyDecl kMaxSloMs{.name = "server.max_slo_ms",
                        .type = T::kNumber,
                        .default_value = "60000",
                        .unit = "ms",
                        .min = 1,
                        .max = 86400000,
                        .help = "largest SLO a request may ask for"};
const KeyDecl kMaxQueue{.name = "server.max_queue",
                        .type = T::kInteger,
                        .default_value = "100000",
                        .unit = "queries",
                        .min = 1,
                        .max = 100000000.0,
                        .help = "bound on queued requests, central and per worker"};
const KeyDecl kInputShape{
    .name = "server.input_shape",
    .type = T::kString,
    .help = "declared input shape of the task, \"-1,16\" (default: the profile's)"};
const KeyDecl kPayloadMb{
    .name = "server.payload_mb",
    .type = T::kNumber,
    .default_value = "256",
    .unit = "MiB",
    .min = 1,
    .max = 1048576,
    .help = "bound on tensors held for requests in the system (beyond it: 429)"};
const KeyDecl kMaxConnections{
    .name = "server.max_connections",
    .type = T::kInteger,
    .default_value = "10000",
    .min = 1,
    .max = 1000000.0,
    .help = "open HTTP connections (beyond it the longest-idle keep-alive one is closed)"};
const KeyDecl kDrainS{.name = "server.drain_s",
                      .type = T::kNumber,
                      .default_value = "5",
                      .unit = "s",
                      .min = 0,
                      .max = 3600,
                      .help = "on shutdown, how long queued requests are still served"};
const KeyDecl kIdleTimeoutS{.name = "server.idle_timeout_s",
                            .type = T::kNumber,
                            .default_value = "60",
                            .unit = "s",
                            .min = 0.001,
                            .max = 86400,
                            .help = "close a keep-alive connection idle this long"};
const KeyDecl kHeaderTimeoutS{.name = "server.header_timeout_s",
                              .type = T::kNumber,
                              .default_value = "10",
                              .unit = "s",
                              .min = 0.001,
                              .max = 3600,
                              .help = "time to send a request's headers"};
const KeyDecl kBodyTimeoutS{.name = "server.body_timeout_s",
                            .type = T::kNumber,
                            .default_value = "10",
                            .unit = "s",
                            .min = 0.001,
                            .max = 3600,
                            .help = "time to send a request's body, at least"};
const KeyDecl kMinBodyRateKib{.name = "server.min_body_rate_kib",
                              .type = T::kNumber,
                              .default_value = "64",
                              .unit = "KiB/s",
                              .min = 0.001,
                              .max = 1048576,
                              .help = "slowest body upload accepted past body_timeout_s"};
const KeyDecl kInflightBodyMb{.name = "server.inflight_body_mb",
                              .type = T::kNumber,
                              .default_value = "256",
                              .unit = "MiB",
                              .min = 1,
                              .max = 1048576,
                              .help = "bound on request bodies being read at once"};
const KeyDecl kGrpcPort{.name = "server.grpc_port",
                        .type = T::kInteger,
                        .default_value = "0",
                        .min = 0,
                        .max = 65535,
                        .help = "gRPC port (0 = no gRPC endpoint)"};
const KeyDecl kGrpcThreads{
    .name = "server.grpc_threads",
    .type = T::kInteger,
    .min = 1,
    .max = 256,
    .help = "gRPC completion-queue threads (default 2, or 1 with remote workers)"};
const KeyDecl kGrpcMaxInFlight{.name = "server.grpc_max_in_flight",
                               .type = T::kInteger,
                               .default_value = "10000",
                               .min = 1,
                               .max = 10000000.0,
                               .help = "gRPC calls in flight (beyond it: RESOURCE_EXHAUSTED)"};
const KeyDecl kRemoteWorkers{
    .name = "server.remote_workers",
    .type = T::kString,
    .help =
        "`sloserve worker` addresses, \"host:port,host:port\", or dns:///NAME:PORT (every "
        "address NAME resolves to, re-resolved every 5 s) (docs/remote-workers.md)"};
const KeyDecl kRemoteWorkersFile{
    .name = "server.remote_workers_file",
    .type = T::kPath,
    .help =
        "file of `sloserve worker` addresses (HOST:PORT per line, # comments), re-read when "
        "it changes: an elastic set (docs/remote-workers.md)"};
const KeyDecl kRemoteWorkerSlots{.name = "server.remote_worker_slots",
                                 .type = T::kInteger,
                                 .default_value = "16",
                                 .min = 1,
                                 .max = 1024,
                                 .help =
                                     "engine workers of an elastic set (remote_workers_file "
                                     "or dns:///NAME:PORT); a free slot is down"};
const KeyDecl kRemoteHealthIntervalMs{.name = "server.remote_health_interval_ms",
                                      .type = T::kNumber,
                                      .default_value = "200",
                                      .unit = "ms",
                                      .min = 10,
                                      .max = 60000,
                                      .help = "health-check period of remote or KServe workers"};
const KeyDecl kRemoteHealthTimeoutMs{.name = "server.remote_health_timeout_ms",
                                     .type = T::kNumber,
                                     .default_value = "500",
                                     .unit = "ms",
                                     .min = 10,
                                     .max = 60000,
                                     .help = "how long a health check waits for its answer"};
const KeyDecl kRemoteFailuresToDown{
    .name = "server.remote_failures_to_down",
    .type = T::kInteger,
    .default_value = "2",
    .min = 1,
    .max = 100,
    .help = "failed health checks in a row that mark a worker down"};
const KeyDecl kRemoteCallTimeoutMs{.name = "server.remote_call_timeout_ms",
                                   .type = T::kNumber,
                                   .default_value = "5000",
                                   .unit = "ms",
                                   .min = 1,
                                   .max = 3600000,
                                   .help = "deadline of one call to a worker"};
const KeyDecl kRemoteConnectTimeoutS{.name = "server.remote_connect_timeout_s",
                                     .type = T::kNumber,
                                     .default_value = "30",
                                     .unit = "s",
                                     .min = 0.1,
                                     .max = 3600,
                                     .help = "time the remote workers have to answer at start-up"};
const KeyDecl kRemoteReconnectBackoffMs{.name = "server.remote_reconnect_backoff_ms",
                                        .type = T::kNumber,
                                        .default_value = "1000",
                                        .unit = "ms",
                                        .min = 10,
                                        .max = 600000,
                                        .help = "wait before reconnecting to a lost worker"};
const KeyDecl kKserveWorkers{.name = "server.kserve_workers",
                             .type = T::kString,
                             .help = "KServe v2 gRPC servers used as workers, \"host:port,...\""};
const KeyDecl kKserveModel{.name = "server.kserve_model",
                           .type = T::kString,
                           .help = "model name asked of KServe workers (default: the task's)"};
const KeyDecl kEarlyShed{.name = "server.early_shed",
                         .type = T::kChoice,
                         .default_value = "on",
                         .choices = {"on", "off"},
                         .help = "refuse on the io thread what admission refuses anyway: on | off"};
const KeyDecl kLatencyBuckets{
    .name = "server.latency_buckets",
    .type = T::kNumberList,
    .unit = "s",
    .min = 0,
    .max = 86400,
    .help = "latency histogram bounds, ascending (default: dense around the SLOs)"};
const KeyDecl kModelControl{.name = "server.model_control",
                            .type = T::kChoice,
                            .default_value = "none",
                            .choices = {"none", "explicit"},
                            .help = "model load/unload over the API: none (403) | explicit"};
const KeyDecl kAdminTokenFile{
    .name = "server.admin_token_file",
    .type = T::kPath,
    .help = "file holding the bearer token for control and statistics endpoints"};
const KeyDecl kRequireTokenForInfer{.name = "server.require_token_for_infer",
                                    .type = T::kBool,
                                    .default_value = "false",
                                    .help = "inference needs the admin token too"};
const KeyDecl kRequireTokenForMetrics{.name = "server.require_token_for_metrics",
                                      .type = T::kBool,
                                      .default_value = "false",
                                      .help = "/metrics needs the admin token too"};
const KeyDecl kTlsCertFile{
    .name = "server.tls_cert_file",
    .type = T::kPath,
    .help = "server certificate (PEM): HTTPS and gRPC over TLS; re-read on SIGHUP"};
const KeyDecl kTlsKeyFile{
    .name = "server.tls_key_file", .type = T::kPath, .help = "private key of tls_cert_file (PEM)"};
const KeyDecl kTlsClientCaFile{.name = "server.tls_client_ca_file",
                               .type = T::kPath,
                               .help = "CA whose client certificates are required (mTLS)"};
const KeyDecl kWorkerRunTransport{
    .name = "server.worker_run_transport",
    .type = T::kChoice,
    .default_value = "grpc",
    .choices = {"grpc", "tcp"},
    .help =
        "how Runs reach `sloserve worker`s: grpc (their Run stream) | tcp (their TCP Run "
        "channel, `worker --run-port`: a third of the CPU per Run; plaintext)"};
const KeyDecl kWorkerTlsCaFile{.name = "server.worker_tls_ca_file",
                               .type = T::kPath,
                               .help = "CA that signed the workers' certificates"};
const KeyDecl kWorkerTlsCertFile{.name = "server.worker_tls_cert_file",
                                 .type = T::kPath,
                                 .help = "this server's certificate towards the workers"};
const KeyDecl kWorkerTlsKeyFile{.name = "server.worker_tls_key_file",
                                .type = T::kPath,
                                .help = "private key of worker_tls_cert_file"};

}  // namespace

const std::vector<const KeyDecl*>& ServerKeys() {
  static const std::vector<const KeyDecl*> keys = {&kHost,
                                                   &kPort,
                                                   &kThreads,
                                                   &kMaxBodyMb,
                                                   &kMaxSloMs,
                                                   &kMaxQueue,
                                                   &kInputShape,
                                                   &kPayloadMb,
                                                   &kMaxConnections,
                                                   &kDrainS,
                                                   &kIdleTimeoutS,
                                                   &kHeaderTimeoutS,
                                                   &kBodyTimeoutS,
                                                   &kMinBodyRateKib,
                                                   &kInflightBodyMb,
                                                   &kGrpcPort,
                                                   &kGrpcThreads,
                                                   &kGrpcMaxInFlight,
                                                   &kRemoteWorkers,
                                                   &kRemoteWorkersFile,
                                                   &kRemoteWorkerSlots,
                                                   &kRemoteHealthIntervalMs,
                                                   &kRemoteHealthTimeoutMs,
                                                   &kRemoteFailuresToDown,
                                                   &kRemoteCallTimeoutMs,
                                                   &kRemoteConnectTimeoutS,
                                                   &kRemoteReconnectBackoffMs,
                                                   &kKserveWorkers,
                                                   &kKserveModel,
                                                   &kEarlyShed,
                                                   &kLatencyBuckets,
                                                   &kModelControl,
                                                   &kAdminTokenFile,
                                                   &kRequireTokenForInfer,
                                                   &kRequireTokenForMetrics,
                                                   &kTlsCertFile,
                                                   &kTlsKeyFile,
                                                   &kTlsClientCaFile,
                                                   &kWorkerRunTransport,
                                                   &kWorkerTlsCaFile,
                                                   &kWorkerTlsCertFile,
                                                   &kWorkerTlsKeyFile};
  return keys;
}

StatusOr<ServerConfig> ParseServerConfig(const FlatConfig& f) {
  ServerConfig c;
  c.host = TextOf(f, kHost);
  ASSIGN_OR_RETURN(const int64_t port, IntegerOf(f, kPort));
  c.port = static_cast<int>(port);
  if (IsSet(f, kThreads)) {
    ASSIGN_OR_RETURN(const int64_t threads, IntegerOf(f, kThreads));
    c.threads = static_cast<int>(threads);
  }
  ASSIGN_OR_RETURN(c.max_body_mb, NumberOf(f, kMaxBodyMb));
  ASSIGN_OR_RETURN(c.max_slo_ms, NumberOf(f, kMaxSloMs));
  ASSIGN_OR_RETURN(c.max_queue, IntegerOf(f, kMaxQueue));
  c.input_shape = TextOf(f, kInputShape);
  ASSIGN_OR_RETURN(c.payload_mb, NumberOf(f, kPayloadMb));
  ASSIGN_OR_RETURN(c.max_connections, IntegerOf(f, kMaxConnections));
  ASSIGN_OR_RETURN(c.drain_s, NumberOf(f, kDrainS));
  ASSIGN_OR_RETURN(c.idle_timeout_s, NumberOf(f, kIdleTimeoutS));
  ASSIGN_OR_RETURN(c.header_timeout_s, NumberOf(f, kHeaderTimeoutS));
  ASSIGN_OR_RETURN(c.body_timeout_s, NumberOf(f, kBodyTimeoutS));
  ASSIGN_OR_RETURN(c.min_body_rate_kib, NumberOf(f, kMinBodyRateKib));
  ASSIGN_OR_RETURN(c.inflight_body_mb, NumberOf(f, kInflightBodyMb));
  ASSIGN_OR_RETURN(const int64_t grpc_port, IntegerOf(f, kGrpcPort));
  c.grpc_port = static_cast<int>(grpc_port);
  if (IsSet(f, kGrpcThreads)) {
    ASSIGN_OR_RETURN(const int64_t grpc_threads, IntegerOf(f, kGrpcThreads));
    c.grpc_threads = static_cast<int>(grpc_threads);
  }
  ASSIGN_OR_RETURN(c.grpc_max_in_flight, IntegerOf(f, kGrpcMaxInFlight));
  c.remote_workers = TextOf(f, kRemoteWorkers);
  c.remote_workers_file = TextOf(f, kRemoteWorkersFile);
  ASSIGN_OR_RETURN(c.remote_worker_slots, IntegerOf(f, kRemoteWorkerSlots));
  ASSIGN_OR_RETURN(c.remote_health_interval_ms, NumberOf(f, kRemoteHealthIntervalMs));
  ASSIGN_OR_RETURN(c.remote_health_timeout_ms, NumberOf(f, kRemoteHealthTimeoutMs));
  ASSIGN_OR_RETURN(const int64_t remote_failures_to_down, IntegerOf(f, kRemoteFailuresToDown));
  c.remote_failures_to_down = static_cast<int>(remote_failures_to_down);
  ASSIGN_OR_RETURN(c.remote_call_timeout_ms, NumberOf(f, kRemoteCallTimeoutMs));
  ASSIGN_OR_RETURN(c.remote_connect_timeout_s, NumberOf(f, kRemoteConnectTimeoutS));
  ASSIGN_OR_RETURN(c.remote_reconnect_backoff_ms, NumberOf(f, kRemoteReconnectBackoffMs));
  c.kserve_workers = TextOf(f, kKserveWorkers);
  c.kserve_model = TextOf(f, kKserveModel);
  ASSIGN_OR_RETURN(const std::string early_shed, ChoiceOf(f, kEarlyShed));
  c.early_shed = early_shed == "on";
  if (IsSet(f, kLatencyBuckets)) {
    ASSIGN_OR_RETURN(c.latency_buckets, NumberListOf(f, kLatencyBuckets));
  }
  ASSIGN_OR_RETURN(c.model_control, ChoiceOf(f, kModelControl));
  c.admin_token_file = TextOf(f, kAdminTokenFile);
  ASSIGN_OR_RETURN(c.require_token_for_infer, BoolOf(f, kRequireTokenForInfer));
  ASSIGN_OR_RETURN(c.require_token_for_metrics, BoolOf(f, kRequireTokenForMetrics));
  c.tls_cert_file = TextOf(f, kTlsCertFile);
  c.tls_key_file = TextOf(f, kTlsKeyFile);
  c.tls_client_ca_file = TextOf(f, kTlsClientCaFile);
  ASSIGN_OR_RETURN(c.worker_run_transport, ChoiceOf(f, kWorkerRunTransport));
  c.worker_tls_ca_file = TextOf(f, kWorkerTlsCaFile);
  c.worker_tls_cert_file = TextOf(f, kWorkerTlsCertFile);
  c.worker_tls_key_file = TextOf(f, kWorkerTlsKeyFile);
  return c;
}

}  // namespace sloserve

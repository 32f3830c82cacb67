#pragma once
// The Open Inference Protocol over gRPC (inference.GRPCInferenceService, proto/
// grpc_service.proto) in front of an InferenceBackend — the same backend the HTTP
// server uses, so both ports feed one engine. Asynchronous: `threads` completion-queue
// threads; a ModelInfer is handed to the backend and answered from its `done`, so no
// thread waits on the engine. At most `max_in_flight` ModelInfer calls are in the
// backend at once; more are answered RESOURCE_EXHAUSTED. Errors as gRPC status codes
// (docs/grpc.md).
#include <cstdint>
#include <memory>
#include <string>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/server/access_control.h"
#include "sloserve/server/inference_backend.h"
#include "sloserve/server/request_metrics.h"
#include "sloserve/server/tls_files.h"

namespace grpc {
class CompletionQueue;
}  // namespace grpc

namespace sloserve {

class GrpcServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    uint16_t port = 8001;  // 0 = an ephemeral port (Start returns it)
    int threads = 2;
    int64_t max_in_flight = 10000;
    size_t max_message_bytes = size_t{16} << 20;
    Duration max_slo = Seconds(60);
    Duration drain_timeout = Seconds(5);
    std::string server_version = "0.1.0";
    // Per-request histograms and counters shared with the HTTP frontend (which renders
    // them in /metrics), so a gRPC request counts like an HTTP one; null = not recorded.
    std::shared_ptr<RequestMetrics> request_metrics;
    // Model control and the admin token, as the HTTP server's (docs/serve.md "Security"):
    // a denial is PERMISSION_DENIED (model control off) or UNAUTHENTICATED (token).
    AccessOptions access;
    // TLS when tls.cert_file is set (gRPC's SSL server credentials); with a client CA,
    // only clients presenting a certificate it signed get through the handshake.
    TlsFiles tls;
  };

  // `backend` must outlive the server. Errors name the option out of range.
  static StatusOr<std::unique_ptr<GrpcServer>> Create(Options options, InferenceBackend* backend);
  ~GrpcServer();

  // Binds and starts serving; returns the bound port.
  StatusOr<uint16_t> Start();
  // Stops accepting, waits until every call handed to the backend is answered (the
  // backend answers each once; stop it first for a prompt return), then joins.
  void Stop();

  int64_t in_flight() const;

  // After Start, until Stop: the first queue thread's completion queue, for client calls
  // whose events that thread is to deliver too (tags: grpc_protocol::CallTag; remote
  // workers' replies, RemoteExecutor::DrainOn; stop those calls before Stop).
  ::grpc::CompletionQueue* queue() const;

  // Re-reads the TLS files (serve's SIGHUP): new connections get the new certificate
  // within ReloadableServerTls::kRefreshSeconds; on an error the old one stays.
  // FailedPrecondition without TLS or before Start.
  Status ReloadTls();

 private:
  struct Impl;
  explicit GrpcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sloserve

#pragma once
// The gRPC channel the controller opens to a worker (a `sloserve worker` or a KServe v2
// server): messages up to 64 MiB (a batch's tensors), and reconnection attempts to a lost
// worker at most `reconnect_backoff` apart (starting at min(100 ms, it)), since gRPC's own
// backoff grows to minutes and would keep a restarted worker out long after it is back.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "sloserve/core/time.h"

namespace sloserve::remote {

// `credentials`: TLS (server.worker_tls_*), or null for plaintext.
std::shared_ptr<::grpc::Channel> WorkerChannel(
    const std::string& address, Duration reconnect_backoff,
    std::shared_ptr<::grpc::ChannelCredentials> credentials = nullptr);

// The worker lost: codes that mean the process or the link is gone, not a bad action.
inline bool IsWorkerLost(::grpc::StatusCode code) {
  return code == ::grpc::StatusCode::UNAVAILABLE || code == ::grpc::StatusCode::DEADLINE_EXCEEDED ||
         code == ::grpc::StatusCode::CANCELLED || code == ::grpc::StatusCode::UNKNOWN;
}

}  // namespace sloserve::remote

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

std::shared_ptr<::grpc::Channel> WorkerChannel(const std::string& address,
                                               Duration reconnect_backoff);

// Makes this process's gRPC poll each completion queue's own connections (poll strategy
// "poll") instead of sharing one epoll set among every thread that waits on any queue
// (epoll1, the default on Linux), unless GRPC_POLL_STRATEGY is set already. Under epoll1
// an event wakes the thread polling the set, which hands polling to another waiting
// thread (a second wake-up) and kicks the queue's own thread (a third) when it is not
// itself; with "poll" the engine thread waiting for replies polls the workers'
// connections itself: one wake-up per reply (docs/benchmarks.md, "2026-11-28"). `serve`
// calls it when it has remote workers, before its first gRPC object exists (gRPC reads
// the setting once, at its first initialisation).
void PreferOwnQueuePolling();

// The worker lost: codes that mean the process or the link is gone, not a bad action.
inline bool IsWorkerLost(::grpc::StatusCode code) {
  return code == ::grpc::StatusCode::UNAVAILABLE || code == ::grpc::StatusCode::DEADLINE_EXCEEDED ||
         code == ::grpc::StatusCode::CANCELLED || code == ::grpc::StatusCode::UNKNOWN;
}

}  // namespace sloserve::remote

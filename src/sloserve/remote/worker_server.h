#pragma once
// `sloserve worker`: an executor (emulated ProfileExecutor or LibTorch) in its own process,
// executing the worker protocol's actions that a `sloserve serve` controller sends over
// gRPC (proto/worker_service.proto, docs/remote-workers.md). Each Run (a message on a
// controller's Run stream, or a unary call) and each Load/Unload call becomes one
// WorkerAction on the local executor and is answered when its result comes (the
// executor's PostAt results are delivered by a timer thread at their time, or at once on
// the calling thread when already due; Post results at once). Times cross the wire as
// durations: the processes share no clock.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "sloserve/core/payload_store.h"
#include "sloserve/core/status.h"
#include "sloserve/engine/worker_protocol.h"
#include "sloserve/profile/profile.h"
#include "sloserve/server/tls_files.h"

namespace sloserve {

class WorkerServer {
 public:
  struct Options {
    std::string listen = "127.0.0.1:0";  // host:port; port 0 = ephemeral
    // Completion-queue threads. One: the thread that reads an action also answers it
    // (an emulated result is due at once); a second thread in the queue's poll is woken
    // for every action too (3 wake-ups per action instead of 1, docs/benchmarks.md).
    int threads = 1;
    // The TCP Run channel (docs/remote-workers.md, "The TCP Run channel"): a port on the
    // listen address's host where a controller may send its Runs framed on TCP instead of
    // on the gRPC Run stream (fewer CPU cycles per Run); 0 = any free port (HealthReply
    // says which), -1 = none. Plaintext only: refused together with `tls`.
    int run_port = -1;
    size_t payload_bytes = size_t{256} << 20;
    size_t max_message_bytes = size_t{64} << 20;
    std::string executor_name = "emulated";
    bool reads_inputs = false;  // the executor reads input tensors (LibTorch)
    // Which variants the executor loads for real (LibTorch): their Load `at_start` goes to
    // it; another variant's is recorded at once (resident from the engine's start, no
    // cold start to emulate). Unset: none.
    std::function<bool(uint32_t variant)> holds_model;
    // TLS (sloserve worker --tls-cert/--tls-key); with tls.client_ca_file only a controller
    // presenting a certificate that CA signed gets through (docs/remote-workers.md "TLS").
    TlsFiles tls;
    // Bounds on what a caller can make the worker hold (issue 37 item 3): actions pending
    // in all and per session (past them RESOURCE_EXHAUSTED), and rows per Run when the
    // profile has none for the (hardware, variant) (else its largest profiled batch).
    size_t max_pending_actions = 4096;
    size_t max_session_actions = 1024;
    int max_rows = 4096;
    // Stop(): how long pending actions may take to finish; then they are answered
    // UNAVAILABLE and the worker exits (their results are dropped).
    Duration stop_grace = Seconds(5);
    // A numbered lifecycle action whose predecessor has not come waits this long, then
    // the missing numbers are skipped (remote/lifecycle_order.h).
    std::chrono::steady_clock::duration sequence_gap_wait = std::chrono::seconds(2);
  };
  using MakeExecutor =
      std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>;

  // `suite` must outlive the server.
  static StatusOr<std::unique_ptr<WorkerServer>> Create(Options options, const ProfileSuite* suite,
                                                        MakeExecutor make_executor);
  ~WorkerServer();
  // Binds and serves; returns the bound port.
  StatusOr<uint16_t> Start();
  // Stops accepting; actions in flight finish (their executor results come) within
  // Options::stop_grace, the rest are answered UNAVAILABLE. Returns within about
  // stop_grace + 1 s whatever the callers sent.
  void Stop();
  // Actions answered so far (for the log).
  int64_t actions_done() const;
  // The TCP Run channel's bound port (after Start; 0: none), and the Runs received on it.
  uint16_t run_port() const;
  int64_t tcp_runs_received() const;
  // Health calls answered so far.
  int64_t health_checks() const;

 private:
  struct Impl;
  friend struct WorkerRunStream;  // a controller's Run stream (worker_server.cc)
  friend struct WorkerTcpRun;     // a controller's TCP Run channel (worker_server.cc)
  explicit WorkerServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "host:port" -> checked; errors name the text. Port 0 only when `allow_any_port`.
Status CheckAddress(const std::string& address, bool allow_any_port);

}  // namespace sloserve

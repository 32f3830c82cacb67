#pragma once
// The controller's side of remote workers: a WorkerExecutor whose engine worker i is the
// `sloserve worker` process at addresses[i]; each Run is one message on the worker's Run
// stream, each Load/Unload one gRPC call (proto/worker_service.proto), answered when the
// remote executor has finished it, and its result is posted into the driver's inbox
// (docs/remote-workers.md, "The Run stream").
//
// Failure handling: every action has a deadline (the action's expected time plus
// `action_timeout`; a Run's is checked each health round and cancels its stream); a
// call or stream that fails (the worker died, the deadline passed, the connection
// broke) posts a failed result, so the engine re-queues the batch's queries
// once or drops them as executor_error — each query still ends exactly once. A health
// thread calls Health on every worker each `health_interval`; after `failures_to_down`
// failed checks, or at once when an action finds the worker unreachable, the worker is
// marked down: its in-flight calls are cancelled (failing their actions), the engine
// stops giving it queries (Engine::SetWorkerReachable), and actions sent to it fail at
// once. When a health check succeeds again it rejoins.
//
// Elastic worker set (`workers_file` or a `dns_target`, docs/remote-workers.md "Elastic
// workers"): the engine has `slots` workers; each address of the set is given a free
// slot, health-checked, loaded with the slot's resident variants and only then used; a
// slot without an address is down. An address that leaves the set is drained: its slot
// is marked down without cancelling its calls (they finish, or fail once and their
// queries are re-queued as for any lost worker), and the slot is freed for another
// address once they have ended. The set is refreshed on the health thread, before each
// round of checks.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sloserve/core/payload_store.h"
#include "sloserve/core/status.h"
#include "sloserve/engine/worker_protocol.h"
#include "sloserve/profile/profile.h"

namespace grpc {
class ChannelCredentials;
class CompletionQueue;
}  // namespace grpc

namespace sloserve {

struct RemoteExecutorOptions {
  std::vector<std::string> addresses;  // one per engine worker, in WorkerId order
  Duration health_interval = Millis(200);
  Duration health_timeout = Millis(500);
  int failures_to_down = 2;
  Duration action_timeout = Seconds(5);    // beyond the action's expected duration x 2
  Duration connect_timeout = Seconds(30);  // Connect(): how long to wait for every worker
  // The longest wait between reconnection attempts to a lost worker (gRPC's own default
  // grows to minutes, which would keep a restarted worker out long after it is back);
  // attempts start at min(100 ms, this).
  Duration reconnect_backoff = Seconds(1);
  // Down/up transitions and other news (default: stderr).
  std::function<void(const std::string&)> log;
  // TLS to the workers (server.worker_tls_*; grpc_protocol::ChannelTlsCredentials); null =
  // plaintext.
  std::shared_ptr<::grpc::ChannelCredentials> credentials;
  // Runs on each worker's TCP Run channel (server.worker_run_transport = tcp;
  // docs/remote-workers.md "The TCP Run channel") when its Health reply offers one, instead
  // of on its gRPC Run stream: plaintext, so not with `credentials`.
  bool tcp_runs = false;
  // Elastic worker set (then `addresses` is unused): a file of addresses re-read when it
  // changes (checked every health round), or "dns:///NAME:PORT" re-resolved every
  // `dns_interval`; `slots` engine workers.
  std::string workers_file;
  std::string dns_target;
  size_t slots = 0;
  Duration dns_interval = Seconds(5);
  bool elastic() const { return !workers_file.empty() || !dns_target.empty(); }
};

class RemoteExecutor : public WorkerExecutor {
 public:
  // `suite` and `payloads` must outlive the executor.
  RemoteExecutor(const ProfileSuite* suite, PayloadStore* payloads, RemoteExecutorOptions options);
  // Cancels what is in flight and waits for those results to be posted.
  ~RemoteExecutor() override;

  // Waits until every worker answers Health with this suite's variants (an error names
  // the address and what differs, or that it did not answer within connect_timeout), then
  // starts the health checks. Elastic: reads the set once (an unreadable or bad file is
  // an error; a DNS name without addresses is not) and waits for nobody.
  Status Connect();

  // Loads `variants` on `worker` (one Load call each, blocking) and counts them resident
  // there (loaded again if its process restarts): for the variants the engine starts with
  // as resident, for which it sends no LoadVariant. Call after Connect, before serving.
  // Elastic: only counts them resident (each address loads them when it joins).
  Status Preload(WorkerId worker, HardwareId hardware, const std::vector<VariantId>& variants);

  // The replies' completion queue, for the driver's thread to sleep in and read them on
  // (one wake-up per reply); without it (not taken), a thread of the executor reads them.
  // After DrainOn: none (the driver sleeps on its own; see there).
  ExecutorWait* TakeWait() override;

  // Starts the calls and Run streams on `cq`, whose events another component's thread
  // delivers (each tag is a grpc_protocol::CallTag: serve's gRPC inference server queue
  // thread, docs/remote-workers.md "Threads"), instead of on the executor's own queue. That
  // thread then reads the replies: it posts their results without waking the driver's
  // thread and steps the engine itself when that thread is idle (ResultSink::PostQuietly,
  // StepOrWake), as it does for the requests it reads, so at light load a request is read,
  // sent to its worker, and answered on one thread with no hand-off. Call before the driver
  // binds the executor (TakeWait) and before any action is sent.
  void DrainOn(::grpc::CompletionQueue* cq);
  // Before DrainOn's queue is shut down (its server stops; the engine has stopped): cancels
  // what is still on it and waits until its thread has delivered their ends; later calls
  // use the executor's own queue. Does nothing without DrainOn. The queue's thread stops
  // before the executor is destroyed (it may still be in a delivery's StepOrWake).
  void LeaveQueue();
  void Attach(ResultSink* sink) override;
  Duration Send(const WorkerAction& action) override;

  // Workers marked down now (thread-safe).
  int down_workers() const;
  // Workers whose Runs go on a TCP Run channel now (greeted, not ended; thread-safe).
  int tcp_channels_ready() const;
  // Elastic: slots without an address now (thread-safe).
  int vacant_workers() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sloserve

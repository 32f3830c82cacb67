#pragma once
// Up/down state of an executor's remote workers (`sloserve worker` processes or KServe v2
// servers) and the thread that checks them (docs/remote-workers.md, "Failures"): every
// `interval` one round checks every worker at once, each given up after `timeout` (a
// worker that does not answer delays no other's check: remote/call_round.h); `failures_to_down`
// failed checks in a row, or one action that finds the worker lost (MarkDown), mark it
// down: its calls in flight are cancelled (failing their actions) and the engine stops
// giving it queries (ResultSink::PostReachability) before it sees those failures. A
// check that succeeds again brings it back (the engine gives it queries again).
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/core/status.h"
#include "sloserve/engine/worker_protocol.h"

namespace sloserve::remote {

struct WorkerHealthOptions {
  Duration interval = Millis(200);
  Duration timeout = Millis(500);
  int failures_to_down = 2;
  // Down/up transitions (default: stderr).
  std::function<void(const std::string&)> log;
  // Every worker starts down (posted at Attach) and joins at its first good check: the
  // slots of an elastic worker set (RemoteExecutor, docs/remote-workers.md).
  bool start_down = false;
  // Called on the health thread before each round of checks (the worker set's refresh).
  std::function<void()> before_round;
};

// Cancels worker w's calls in `in_flight` (id -> call with `worker` and a `ctx`); the
// caller holds the lock their callbacks retire them under (so they are alive here), with
// `in_flight` GUARDED_BY it. Their callbacks post the failures. Returns how many.
template <class CallMap>
size_t CancelCallsOf(CallMap& in_flight, WorkerId w) {
  size_t n = 0;
  for (auto& [id, call] : in_flight) {
    if (call->worker != w) continue;
    call->ctx.TryCancel();
    ++n;
  }
  return n;
}

class WorkerHealth {
 public:
  // One round: every worker checked within `timeout`, one status each in WorkerId order
  // (OK = healthy). Runs on the health thread.
  using CheckRound = std::function<std::vector<Status>(Duration timeout)>;
  // Cancels worker w's calls in flight (their callbacks post the failures); returns how
  // many. Called once per down transition.
  using CancelCalls = std::function<size_t(WorkerId w)>;

  // names[w] is how worker w appears in the log ("remote worker w0 (10.0.0.5:9001)").
  WorkerHealth(std::vector<std::string> names, WorkerHealthOptions options, CheckRound check,
               CancelCalls cancel);
  ~WorkerHealth();  // Stop()
  WorkerHealth(const WorkerHealth&) = delete;
  WorkerHealth& operator=(const WorkerHealth&) = delete;

  // `sink` receives the reachability changes; before any MarkDown or PostLost. With
  // `start_down`, posts every worker unreachable.
  void Attach(ResultSink* sink) EXCLUDES(mu_);
  // Starts the checks (after Attach; once).
  void Start();
  // Stops the checks (no worker comes back after this) and joins the thread.
  void Stop() EXCLUDES(mu_);

  bool Up(WorkerId w) const EXCLUDES(mu_);
  int down_workers() const EXCLUDES(mu_);
  // Marks w down (once; returns whether it was up) and cancels its calls in flight
  // (unless `cancel` is false: a drained worker's calls finish).
  bool MarkDown(WorkerId w, const std::string& why, bool cancel = true) EXCLUDES(mu_);
  // How worker w appears in the log from now on (an elastic slot's new address).
  void Rename(WorkerId w, std::string name) EXCLUDES(mu_);
  // A failed action of w, posted with w's reachability (down, unless it rejoined since):
  // the engine stops giving w queries first, so a lost batch's re-queued queries go to
  // the others.
  void PostLost(WorkerId w, ActionResult result) EXCLUDES(mu_);
  // A line of news about the workers, where the options say.
  void Log(const std::string& line) const;

 private:
  void Loop() EXCLUDES(mu_);
  void MarkUp(WorkerId w) EXCLUDES(mu_);

  const WorkerHealthOptions options_;
  const CheckRound check_;
  const CancelCalls cancel_;
  ResultSink* sink_ = nullptr;
  std::vector<int> failed_checks_;  // health thread only

  mutable Mutex mu_;
  CondVar cv_;
  std::vector<std::string> names_ GUARDED_BY(mu_);
  std::vector<bool> up_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace sloserve::remote

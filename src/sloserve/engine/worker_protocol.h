#pragma once
// The typed, asynchronous protocol between the engine and whatever executes on a worker
// (simulated, emulated, LibTorch, remote). Modelled on Clockwork's controller/worker
// actions: the engine sends an action and returns at once; the executor answers every
// action exactly once with an ActionResult, later, through the driver's inbox (or its
// timed queue, for executors that know when they will finish). Results may come in any
// order, fail, or report that the action could not start in its window; the engine reacts
// to each as an event (docs/architecture.md, "Worker protocol").
//
//   RunBatch       run `queries` on `variant` (which the engine has made ready first)
//   LoadVariant    make `variant` resident on the worker (a cold start is its result)
//   UnloadVariant  release it
#include <chrono>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/query.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/engine/clock.h"

namespace sloserve {

struct RunBatch {
  ActionId id = 0;
  WorkerId worker = 0;
  HardwareId hardware = 0;
  VariantId variant = 0;
  std::span<const Query> queries;  // each with its payload handle; valid only during Send
  int32_t rows = 0;                // sum of the queries' sizes
  // The window in which starting is still useful: an executor that cannot begin by
  // `latest_start` answers kDeadlineExceeded instead of running (every query would be late).
  TimePoint earliest_start{};
  TimePoint latest_start{kTimeInfinite};
  Duration expected{};  // the engine's estimate from the profile (0 = none)
};

struct LoadVariant {
  ActionId id = 0;
  WorkerId worker = 0;
  HardwareId hardware = 0;
  VariantId variant = 0;
  TimePoint sent{};
  Duration expected{};  // the profile's load time
};

struct UnloadVariant {
  ActionId id = 0;
  WorkerId worker = 0;
  HardwareId hardware = 0;
  VariantId variant = 0;
  TimePoint sent{};
};

using WorkerAction = std::variant<RunBatch, LoadVariant, UnloadVariant>;

inline ActionId IdOf(const WorkerAction& a) {
  return std::visit([](const auto& x) { return x.id; }, a);
}

struct ActionResult {
  ActionId id = 0;
  WorkerId worker = 0;
  Status status;      // kDeadlineExceeded: could not start by latest_start; others: failed
  TimePoint begin{};  // measured by the executor
  TimePoint end{};
  // RunBatch only, one per query in launch order, each optional (empty = not known):
  std::vector<Duration> solo;          // each query's execution time alone (ORLOJ)
  std::vector<PayloadHandle> outputs;  // each query's output tensors in the payload store
};

// Where executors deliver results. The engine's driver implements it.
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  // From the driver's thread, for executors that know when the action will finish
  // (simulated and emulated): delivered when the driver's clock reaches `at`.
  virtual void PostAt(ActionResult&& result, TimePoint at) = 0;
  // From any thread, for executors that learn it when it happens (real, remote):
  // delivered on the driver's thread as soon as it wakes.
  virtual void Post(ActionResult result) = 0;
  // From any thread, for executors whose workers can be lost and regained (remote
  // workers): the engine stops (reachable = false) or resumes giving `worker` queries
  // (Engine::SetWorkerReachable), then `result`, when given, is delivered, so a lost
  // batch's re-queued queries go to the other workers. Default (no engine behind the
  // sink): the result is posted as usual.
  virtual void PostReachability(WorkerId worker, bool reachable,
                                std::optional<ActionResult> result = std::nullopt) {
    (void)worker;
    (void)reachable;
    if (result) Post(std::move(*result));
  }
  // From a thread that reads an executor's results beside work of its own (serve's gRPC
  // queue thread reading remote workers' replies, RemoteExecutor::DrainOn): posts without
  // waking the driver's thread; the poster then calls StepOrWake() once for what it posted
  // from one event. Default: Post.
  virtual void PostQuietly(ActionResult result) { Post(std::move(result)); }
  // After PostQuietly: handles what was posted on the calling thread when the driver's
  // thread is idle (a step run for it: Driver::BeginInline), else wakes that thread.
  virtual void StepOrWake() {}
};

// The wait of an executor whose results arrive as events the driver's own thread can wait
// for (remote workers: replies on a gRPC completion queue). The driver then sleeps here
// instead of on its own condition variable, so a result costs one wake-up (the driver's)
// rather than two (an executor thread that reads it and posts it, then the driver). The
// engine knows nothing of the transport: this is all it sees (docs/remote-workers.md,
// "Threads").
class ExecutorWait {
 public:
  // Driver's thread: blocks until `deadline` (none: no deadline), until Wake(), or until
  // it has handled an event (its results are posted to the sink from this thread); may
  // return early. The deadline may be kept coarsely (gRPC: to the millisecond, rounded
  // up): the driver waits on its own for a deadline less than a millisecond away.
  virtual void WaitUntil(std::optional<std::chrono::steady_clock::time_point> deadline) = 0;
  // Driver's thread, without blocking: handles the events already there.
  virtual void Poll() = 0;
  // Any thread: makes a WaitUntil in progress, or else the next one, return soon.
  virtual void Wake() = 0;

 protected:
  ~ExecutorWait() = default;
};

class WorkerExecutor {
 public:
  virtual ~WorkerExecutor() = default;
  // Called by the driver once, on its thread, before Attach: an executor that returns its
  // wait (default: none) delivers results from the driver's calls into it from then on
  // (and may use threads of its own again once the driver is gone, e.g. to drain at its
  // destruction). One that returns nullptr posts from its own threads.
  virtual ExecutorWait* TakeWait() { return nullptr; }
  // Called by the engine on the driver's thread before any Send.
  virtual void Attach(ResultSink* sink) { sink_ = sink; }
  // Called by a live runtime right after it made the executor, before any action: the
  // driver's clock, for executors that read one (begin/end, the start window), so their
  // times are on the engine's timeline. `clock` outlives the executor. Default: ignored.
  virtual void UseClock(const Clock* clock) { (void)clock; }
  // Starts the action and returns at once; its result comes later through the sink,
  // exactly once. Returns the executor's own estimate of the duration when it has one
  // (the simulator knows it exactly), else 0.
  //
  // Ordering, the contract every executor must keep and the engine relies on: the lifecycle
  // actions (LoadVariant, UnloadVariant) of one worker take effect in the order they are
  // Sent — one starts only after every lifecycle action Sent before it to that worker has
  // ended — so the memory of an Unload can be counted free when it is Sent, and a Load
  // Sent after it never runs while the unloaded variant still holds it. RunBatch actions
  // carry no such guarantee among themselves (the engine runs a variant only once its
  // Load has succeeded). The emulated executor keeps it trivially (an Unload ends when it
  // is Sent); remote workers keep it across processes and gRPC threads with a per-worker
  // sequence number (docs/remote-workers.md, "Ordering").
  virtual Duration Send(const WorkerAction& action) = 0;
  // Workers that are free slots of an elastic worker set (no address; reported
  // unreachable, but no failure: docs/remote-workers.md, "Elastic workers"). Any thread.
  virtual int vacant_workers() const { return 0; }

 protected:
  ResultSink* sink_ = nullptr;
};

}  // namespace sloserve

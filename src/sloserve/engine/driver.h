#pragma once
// The one event loop around the engine, for `sim` and `serve` alike (docs/architecture.md
// "One driver"). It owns the engine's time-ordered inputs: results executors post for a
// known time (simulated, emulated), results and arrivals other threads post into its
// inbox, finished offline jobs, the engine's timers and the plan tick. Step(now) handles
// everything due at or before `now` in one documented order; at one instant:
//
//   1. action results (timed ones by (time, post order), then posted ones in arrival order)
//   2. finished offline jobs (their publish steps)
//   3. control messages
//   4. engine timers
//   5. the plan tick
//   6. one arrival (the inbox's first, else the arrival source's)
//
// and after each handled item it starts again from 1, so a result that an arrival
// caused at the same instant is seen before the next arrival. `sim` jumps a ManualClock
// to NextDue() and calls Step; `serve` sleeps until NextDue() or until the inbox gets
// something (WaitForWork) — in the executor's wait when it offers one (ExecutorWait:
// remote workers' replies are read on the driver's thread) — then calls Step with the
// steady clock's time. Offline jobs
// run inline in virtual time (their results delivered after a configurable virtual
// duration) or on a bounded pool of threads in real time.
#include <atomic>
#include <deque>
#include <functional>
#include <queue>
#include <thread>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/engine/clock.h"
#include "sloserve/engine/engine.h"
#include "sloserve/engine/worker_protocol.h"

namespace sloserve {

// The arrivals of a simulation: the next arrival's time, and admitting it.
class ArrivalSource {
 public:
  virtual ~ArrivalSource() = default;
  virtual TimePoint NextArrival() const = 0;
  virtual void AdmitNext(Engine& engine, TimePoint now) = 0;
};

struct DriverOptions {
  Duration plan_interval = Seconds(1);
  // Offline jobs: false = run inline when submitted and deliver the result
  // `offline_delay` later in the driver's time (deterministic: sim); true = run on
  // `offline_threads` threads and deliver when done (serve).
  bool offline_threads_enabled = false;
  int offline_threads = 1;
  Duration offline_delay{};
  // Real time (serve): the clock Step reads again whenever it takes in posts (results,
  // arrivals, controls) that came while it ran, so they are handled at their time, not at
  // the step's start. Without it a result posted during a step that lasted its whole batch
  // (the stepping thread preempted by the worker thread it had just woken) completed at the
  // instant the batch was formed: 9-43% of serve's requests in experiments/real-digits
  // reported ~0 service time (issue 35). Null (sim, tests): the time Step is given.
  const Clock* clock = nullptr;
};

class Driver : public ResultSink {
 public:
  using EngineStep = std::function<void(Engine&, TimePoint)>;

  explicit Driver(DriverOptions options);
  ~Driver() override;
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // For EngineOptions::submit_offline (the engine is created after the driver).
  std::function<void(OfflineJob)> OfflineSubmitter();
  // For EngineOptions::offline_cancel: set by CancelOffline() and at destruction, so
  // long offline work that polls it ends early instead of delaying a shutdown.
  const std::atomic<bool>* offline_cancel() const { return &offline_cancel_; }
  void CancelOffline() { offline_cancel_.store(true, std::memory_order_relaxed); }
  // Binds the engine and attaches the driver to the executor as its result sink.
  void Bind(Engine* engine, WorkerExecutor* executor);
  void SetArrivals(ArrivalSource* arrivals) { arrivals_ = arrivals; }

  // ResultSink.
  void PostAt(ActionResult&& result, TimePoint at) override;    // driver thread
  void Post(ActionResult result) override EXCLUDES(inbox_mu_);  // any thread
  void PostReachability(WorkerId worker, bool reachable,
                        std::optional<ActionResult> result) override EXCLUDES(inbox_mu_);
  // Any thread: an arrival (step 6) or a control message (step 3), run on the driver's
  // thread with the engine and the time.
  void PostArrival(EngineStep step) EXCLUDES(inbox_mu_);
  // Several arrivals in order (each still its own step 6), with at most one wake-up of
  // the driver's thread for all of them; leaves `steps` empty.
  void PostArrivals(std::vector<EngineStep>& steps) EXCLUDES(inbox_mu_);
  void PostControl(EngineStep step) EXCLUDES(inbox_mu_);
  // Any thread (ResultSink): a result posted without a wake-up, then once for what was
  // posted so: the inline stepper (SetInlineStepper) runs the step on the caller's thread
  // if it can, else the driver's thread is woken.
  void PostQuietly(ActionResult result) override EXCLUDES(inbox_mu_);
  void StepOrWake() override EXCLUDES(inbox_mu_);
  // For StepOrWake (set before any thread posts): returns true when it ran a step for the
  // driver's thread (BeginInline(true) ... EndInline) on the caller's thread.
  void SetInlineStepper(std::function<bool()> stepper) { inline_stepper_ = std::move(stepper); }

  // The earliest time something is due (kTimeInfinite: nothing but the inbox can come).
  TimePoint NextDue() const;
  // Handles everything due at or before `now`; returns how many items it handled.
  int64_t Step(TimePoint now);
  // Control messages handled so far (PostControl, PostReachability): a change of the
  // engine's state that no query's answer shows (e.g. a worker marked down).
  uint64_t controls_handled() const { return controls_handled_; }
  // Virtual time (sim): moves `clock` from event to event, handling each in Step's order,
  // until nothing but plan ticks is left; returns the number of items handled. The same
  // order as Step in one pass per item (the simulator's hot loop).
  int64_t RunVirtual(ManualClock* clock);
  // Real time: sleeps until NextDue(), `limit`, the inbox getting something, or Wake().
  // With an executor's wait (WorkerExecutor::TakeWait), sleeps in it, so the executor's
  // results are read on this thread; a deadline less than kCoarseWait away is waited for
  // on the driver's own condition variable (the executor's wait may round it up), and the
  // executor's events that came meanwhile are handled right after. When it does not
  // sleep, it still lets the executor hand over the results already there (Poll), at
  // most every kPollInterval, so a driver kept busy by arrivals still sees results.
  void WaitForWork(const SteadyClock& clock, TimePoint limit) EXCLUDES(inbox_mu_);
  static constexpr Duration kCoarseWait = Millis(2);
  static constexpr Duration kPollInterval = Millis(1);
  void Wake() EXCLUDES(inbox_mu_);

  // Steps run for the driver's thread by another thread (real time, serve): while that
  // thread sleeps on its condition variable with nothing posted (no executor's wait),
  // a thread with arrivals may post them and run Step itself instead of waking it — a
  // wake-up is a context switch, the largest cost of a request at light load (issue 38).
  // BeginInline() true: the caller owns the driver until EndInline() (one caller at a
  // time; the caller holds what the driver's thread holds around Step, e.g. the engine's
  // lock); the driver's thread, should it wake meanwhile, waits for EndInline() before
  // it reads anything. PostArrivalsInline posts without a wake-up (the caller steps);
  // EndInline wakes the driver's thread when something is now due before the time it
  // sleeps until, or when something was posted after the caller's last step.
  // `posted`: results were posted quietly for this step (PostQuietly), so the inbox is
  // not empty; else only a driver with nothing posted is stepped for.
  bool BeginInline(bool posted = false) EXCLUDES(inbox_mu_);
  void PostArrivalsInline(std::vector<EngineStep>& steps) EXCLUDES(inbox_mu_);
  void EndInline() EXCLUDES(inbox_mu_);
  // Offline jobs submitted and not yet delivered.
  size_t offline_pending() const { return offline_pending_; }

 private:
  struct Timed {
    TimePoint at;
    uint64_t seq;
    bool operator>(const Timed& o) const { return at > o.at || (at == o.at && seq > o.seq); }
  };
  // Results wait in a slab; the heap orders small (time, seq, index) entries, so a sift
  // moves 24 bytes rather than a result with its vectors and status.
  struct TimedResult : Timed {
    uint32_t index;
  };
  struct TimedJob : Timed {
    std::function<void()> publish;
  };
  struct Later {
    template <class T>
    bool operator()(const T& a, const T& b) const {
      return a > b;
    }
  };

  void SubmitOffline(OfflineJob job) EXCLUDES(pool_mu_);
  void HandleTimedResult(Engine& engine, TimePoint now);
  void HandleTimedJob();
  bool DrainInbox() EXCLUDES(inbox_mu_);
  // Wakes the driver's thread where it sleeps for an inbox item or Wake(): returns true
  // when the caller must notify inbox_cv_ (after or before unlocking); the executor's
  // wait is woken here, under the lock, unless this is the driver's own thread (a result
  // its wait posts).
  bool WakeLocked() REQUIRES(inbox_mu_);
  void PoolLoop() EXCLUDES(pool_mu_, inbox_mu_);

  DriverOptions options_;
  Engine* engine_ = nullptr;
  ArrivalSource* arrivals_ = nullptr;
  TimePoint now_{};
  TimePoint next_plan_{kTimeInfinite};
  // Real time with an executor's wait: when its results were last taken (WaitForWork).
  TimePoint last_executor_drain_{};
  uint64_t seq_ = 0;
  std::priority_queue<TimedResult, std::vector<TimedResult>, Later> timed_results_;
  std::deque<ActionResult> result_slab_;  // a deque: growing it moves no result
  std::vector<uint32_t> free_results_;
  std::priority_queue<TimedJob, std::vector<TimedJob>, Later> timed_jobs_;
  // Drained from the inbox, handled on the driver's thread.
  std::deque<ActionResult> posted_results_;
  std::deque<std::function<void()>> finished_jobs_;
  std::deque<EngineStep> controls_;
  uint64_t controls_handled_ = 0;
  std::deque<EngineStep> arrivals_in_;
  size_t offline_pending_ = 0;
  std::function<bool()> inline_stepper_;  // SetInlineStepper; read-only once posting starts

  // The inbox, filled from any thread.
  Mutex inbox_mu_;
  CondVar inbox_cv_;
  std::atomic<bool> inbox_nonempty_{false};  // set under inbox_mu_, read without it
  bool woken_ GUARDED_BY(inbox_mu_) = false;
  // Where the driver's thread sleeps (with an executor's wait; without one, posts always
  // notify inbox_cv_ as before).
  enum class Sleep { kAwake, kOnCondVar, kAwaitingInline, kInExecutor };
  ExecutorWait* wait_ GUARDED_BY(inbox_mu_) = nullptr;  // set once, by Bind
  Sleep sleeping_ GUARDED_BY(inbox_mu_) = Sleep::kAwake;
  // While sleeping on the condition variable: until when (kTimeInfinite: no deadline).
  TimePoint sleep_until_ GUARDED_BY(inbox_mu_){kTimeInfinite};
  bool inline_busy_ GUARDED_BY(inbox_mu_) = false;  // between BeginInline and EndInline
  std::thread::id waiting_thread_ GUARDED_BY(inbox_mu_);
  std::vector<ActionResult> inbox_results_ GUARDED_BY(inbox_mu_);
  std::vector<std::function<void()>> inbox_jobs_ GUARDED_BY(inbox_mu_);
  std::vector<EngineStep> inbox_controls_ GUARDED_BY(inbox_mu_);
  std::vector<EngineStep> inbox_arrivals_ GUARDED_BY(inbox_mu_);

  // The offline pool (real time only).
  Mutex pool_mu_;
  CondVar pool_cv_;
  std::deque<OfflineJob> pool_queue_ GUARDED_BY(pool_mu_);
  bool pool_stop_ GUARDED_BY(pool_mu_) = false;
  std::atomic<bool> offline_cancel_{false};
  std::vector<std::thread> pool_;
};

}  // namespace sloserve

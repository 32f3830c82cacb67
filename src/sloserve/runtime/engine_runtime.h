#pragma once
// The engine in real time, behind the InferenceBackend boundary: one engine thread owns
// all scheduling state (ARCHITECTURE.md "Threading"). Network threads call Submit(),
// which only posts the request into the driver's inbox; the engine thread runs the same
// Driver, Engine and policies as the simulator over the steady clock, stamps arrival
// with it, and answers each request exactly once through its `done` callback. The
// emulated executor is the simulator's ProfileExecutor: it posts each action's result
// for the moment the profile says it ends, so no CPU is burnt and large suites can be
// served here.
//
// Payloads: the runtime owns a PayloadStore. Admit() puts each request's input tensors
// there and the engine carries the handle (Query::payload); an executor resolves it,
// puts its outputs there and returns their handles in ActionResult::outputs. Answer()
// copies the outputs into the client's InferOutcome and releases both handles on every
// path (completed, dropped, shut down), so the store holds only queries in the system.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/core/payload_store.h"
#include "sloserve/engine/clock.h"
#include "sloserve/engine/deployment.h"
#include "sloserve/engine/driver.h"
#include "sloserve/engine/engine.h"
#include "sloserve/exec/profile_executor.h"
#include "sloserve/exec/service_time_model.h"
#include "sloserve/policy/policy_spec.h"
#include "sloserve/policy/selection/row_capacity.h"
#include "sloserve/runtime/early_shed.h"
#include "sloserve/runtime/load_observer.h"
#include "sloserve/runtime/served_models.h"
#include "sloserve/server/inference_backend.h"

namespace sloserve {

struct RuntimeOptions {
  DeploymentSpec deployment;
  PolicySpec policy;
  ServiceTimeOptions service;  // emulated executor: how long a batch holds its worker
  uint64_t seed = 1;
  size_t max_queue = 100'000;  // admission bound (central and per worker)
  // Overload protection in the engine (docs/admission.md): shed requests get 429.
  AdmissionOptions admission;
  // Refuse on the caller's thread what admission is refusing at every level anyway
  // (runtime/early_shed.h); false: every request goes to the engine thread.
  bool early_shed = true;
  // A request that finds the engine thread asleep with nothing to do is stepped on the
  // caller's thread (Driver::BeginInline) instead of waking it: no context switch to the
  // engine thread and back at light load (issue 38). false: every request is handed over.
  bool inline_steps = true;
  Duration plan_interval = Seconds(1);  // planning policy tick (when one is configured)
  // Where each worker runs, by WorkerId, for /metrics' sloserve_worker_up{worker, address}
  // (remote workers: host:port); empty or shorter = "local" (in this process).
  std::vector<std::string> worker_addresses;
  // Multi-model deployments (issue 31, docs/protocol.md "Many models"): each model's SLO
  // by model (task) name: its requests' default SLO and its policies' (the engine's
  // EngineOptions::model_slo); a model not listed gets the deployment's SLO for the
  // deployment's task, else its task's default SLO. Checked in Create like the
  // deployment's SLO (a model not served, an SLO below its fastest variant: refused).
  std::vector<std::pair<std::string, Duration>> model_slos;
  // Multi-model deployments: a model's batching/selection where it differs from `policy`
  // (the engine's PolicySet::model_batching), by model name; a name not served is refused.
  std::vector<std::pair<std::string, PolicySpec>> model_policies;
  // Declared input shape of the deployment's task, replacing the profile's. The emulated
  // executor never reads tensor data, so load tests may declare a small tensor.
  std::vector<int64_t> input_shape;
  // false: Create() initialises the policies (a RAMSIS policy set may take minutes to
  // generate). true: Create() returns at once and the engine thread initialises them
  // after Start(); until then Ready() is false with the progress as the reason and
  // requests are answered 503, so a server can bind its port and talk while it starts.
  bool deferred_init = false;
  // Progress lines of a deferred start (default: stderr, at most one every 2 s).
  std::function<void(const std::string&)> log;
  // Bound on the bytes of tensors held for queries in the system (inputs and outputs,
  // see PayloadStore); a request that does not fit is answered RESOURCE_EXHAUSTED.
  // Checked in Create: [1 KiB, 1 TiB].
  size_t payload_bytes = size_t{256} << 20;
  // Builds the executor (default: the emulated ProfileExecutor, which reads no payloads).
  // A real executor resolves Query::payload in `payloads`, puts each query's outputs
  // there and returns their handles in ActionResult::outputs, one per query and only on
  // an OK result (the engine ignores the outputs of a failed result, so they would stay
  // in the store). It may post results from its own threads (ResultSink::Post) and must
  // have posted every result before the runtime is destroyed.
  std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)> make_executor;
  // Builds the planning policy, replacing `policy`'s (default: none replaced), e.g. a
  // test's own planner.
  std::function<std::unique_ptr<PlanningPolicy>()> make_planning;
  // The engine's bound on workers per hardware type (EngineOptions::max_workers_of_type).
  std::vector<int> max_workers_of_type;
};

class EngineRuntime : public InferenceBackend {
 public:
  // `suite` must outlive the runtime.
  static StatusOr<std::unique_ptr<EngineRuntime>> Create(const ProfileSuite* suite,
                                                         RuntimeOptions options);
  ~EngineRuntime() override;

  void Start();
  // Stops accepting, waits up to `grace` for queued work, then answers the rest with an
  // UNAVAILABLE error; batches still running get `grace` again, then their queries are
  // answered UNAVAILABLE too (returns within 2 x grace). Idempotent.
  void Stop(Duration grace = Seconds(5));

  // Blocks until the policies are initialised (at once unless deferred_init) and returns
  // the outcome; a failed start leaves the runtime refusing every request.
  Status WaitUntilInitialized();
  bool Initialized() const;

  std::vector<TaskInfo> Tasks() const override { return served_.infos(); }
  bool Ready() const override;
  std::string NotReadyReason() const override;
  std::string ReadyNote() const override;
  void Submit(InferRequest request, std::function<void(InferOutcome)> done) override;
  void SubmitAll(std::vector<Submission>& batch) override;
  std::string PrometheusMetrics() const override;
  void ClientGone() override;
  // The model repository: a task's state, and its load/unload (docs/protocol.md "Model
  // repository"). Unloading refuses the task's new requests, waits for those in the
  // system, then sends UnloadVariant for each of its variants resident on a worker;
  // loading sends LoadVariant for those again and serves once every load succeeded.
  ModelState StateOf(std::string_view task) const override;
  void SetModelLoaded(const std::string& task, bool load,
                      std::function<void(Status)> done) override;

  // Aggregates so far (thread-safe; while the engine thread runs, as of the snapshot it
  // last published: see Snapshot()).
  MetricsSummary Summary();
  // Summary() with the latency phases (metrics.h `phases`), which the published snapshots
  // leave out: waits for the engine thread's step in progress, so for the end of a run
  // (serve's final report), not for scrapes.
  MetricsSummary FinalSummary();
  const ProfileSuite& suite() const { return *suite_; }
  const Deployment& deployment() const { return deployment_; }
  // The tensors of the queries in the system (thread-safe).
  PayloadStore* payloads() { return payloads_.get(); }

 private:
  struct Pending {
    InferRequest request;
    std::function<void(InferOutcome)> done;
  };
  EngineRuntime(const ProfileSuite* suite, RuntimeOptions options);
  // Where a submitted request goes: to the engine thread, refused by early shedding, or
  // refused because the runtime is not accepting (stopped, not started, failed start).
  // kNoWorker: every worker is unreachable (remote workers all marked down).
  enum class Intake { kAccept, kShed, kRefuse, kNoWorker };
  // `task`: the request's model (served_.Find, looked up before inbox_mu_ is taken).
  Intake IntakeOf(const InferRequest& request, std::optional<TaskId> task) REQUIRES(inbox_mu_);
  Driver::EngineStep ArrivalStep(Pending p);
  // Answers a request IntakeOf did not accept (not under inbox_mu_).
  void Refuse(Intake intake, const std::function<void(InferOutcome)>& done) const
      EXCLUDES(inbox_mu_);
  // Workers the executor reports unreachable now (remote workers marked down; always 0
  // for in-process executors), and what that means for serving: "" while at least one
  // worker is reachable, else "no worker reachable: N of N remote workers down". Any
  // thread; the executor's health state, not the engine's (which its thread owns).
  int UnreachableWorkers() const;
  bool NoWorkerReachable() const;
  std::string NoWorkerReason() const;
  // Builds the engine and initialises the policies (the slow part of a start).
  Status Initialize();
  void ReportProgress(const std::string& what, int done, int total);
  TimePoint Now() const;
  void Loop();
  // One step of the engine and what follows every step (the engine thread's or an inline
  // one, Driver::BeginInline), then the snapshot and the step's answers (PublishAndAnswer).
  void StepLocked(TimePoint now, bool force_publish) REQUIRES(engine_mu_);
  // After Driver::BeginInline returned true: steps for the engine thread, then ends it.
  void StepInline() EXCLUDES(engine_mu_);
  // Driver::StepOrWake's inline stepper: the results posted quietly by this thread are
  // handled on it when the engine thread is idle (then true), else false.
  bool StepPostedInline() EXCLUDES(engine_mu_, inbox_mu_);
  void Admit(Pending p, TimePoint now) REQUIRES(engine_mu_);
  void Answer(const QueryRecord& r) REQUIRES(engine_mu_);
  // The model repository's operations, on the engine thread.
  void StartModelOp(TaskId task, bool load, std::function<void(Status)> done, TimePoint now)
      REQUIRES(engine_mu_);
  // Finishes the operations whose actions have all come back (after every driver step).
  void AdvanceModelOps(TimePoint now) REQUIRES(engine_mu_);
  void FinishModelOp(TaskId task, ModelState state, const Status& status) REQUIRES(engine_mu_);

  // Completed queries per hardware type (heterogeneous deployments: where queries ran).
  struct TypeCounters {
    int64_t workers = 0;  // workers of this type (in a snapshot: now, not retired)
    int64_t active = 0;   // in a snapshot: of which receiving queries
    int64_t served = 0;   // completed queries
    int64_t late = 0;     // of which past their deadline
    int64_t rows = 0;     // their rows
    Duration service{};   // their summed service time (batch start -> completion)
  };
  // What Summary() and /metrics read of the engine, copied in one engine step.
  struct EngineSnapshot {
    MetricsSummary summary;  // the engine's, with the early-shed refusals added
    std::vector<PriorityStats> by_level;
    EngineCounters counters;
    size_t queued = 0, busy = 0, active = 0;  // over the workers
    std::vector<TypeCounters> by_type;
    int64_t unknown_apps = 0;
  };
  // Without the early-shed refusals (Snapshot adds them when read: they happen on the
  // callers' threads, between steps).
  EngineSnapshot TakeSnapshot(TimePoint now) const REQUIRES(engine_mu_);
  // The snapshot the engine thread last published (at Initialize, then while it runs:
  // PublishAndAnswer, its last one as it exits), copied without waiting for a step: a
  // scrape never takes engine_mu_, which that thread holds for every step, so a slow step
  // cannot stall a frontend's thread. While serving it also asks the engine thread for a
  // fresh one after its next step. Empty before the engine exists.
  std::optional<EngineSnapshot> Snapshot() const;
  // Engine thread, after a step: publishes a snapshot when the step answered a request
  // (before the answers go out, so a client that got its answer finds it counted), when
  // one was asked for, or `force`; then sends the step's answers.
  void PublishAndAnswer(TimePoint now, bool force) REQUIRES(engine_mu_);
  // Engine thread, inside a step: `done(out)` once this step's snapshot is published.
  void Reply(std::function<void(InferOutcome)> done, InferOutcome out) REQUIRES(engine_mu_);

  const ProfileSuite* suite_;
  RuntimeOptions options_;
  Deployment deployment_;
  ServedModels served_;  // read-only once created
  SteadyClock clock_;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<PayloadStore> payloads_;  // before executor_: it may point here
  std::unique_ptr<WorkerExecutor> executor_;
  LoadObservingExecutor* load_observer_ = nullptr;  // executor_, seen as the load counter
  // Until Initialize(): the policies and engine options it needs.
  std::unique_ptr<PolicySet> pending_policies_;
  EngineOptions engine_options_;
  // The runtime's state (the driver has its own inbox); declared first: fields name it.
  mutable Mutex inbox_mu_;
  // Start-up state: done, outcome, what is being done.
  bool initialized_ GUARDED_BY(inbox_mu_) = false;
  Status init_status_ GUARDED_BY(inbox_mu_);
  std::string starting_what_ GUARDED_BY(inbox_mu_) = "initialising the policies";
  // A policy serving a fallback while it prepares in the background (PolicyContext::degraded).
  std::string degraded_ GUARDED_BY(inbox_mu_);
  void SetDegraded(const std::string& note);
  void Log(const std::string& line) const;  // options_.log, else stderr
  CondVar init_cv_;
  std::chrono::steady_clock::time_point progress_started_ GUARDED_BY(inbox_mu_){};
  std::chrono::steady_clock::time_point last_progress_log_ GUARDED_BY(inbox_mu_){};
  mutable Mutex engine_mu_;         // held by the engine thread while it works
  std::unique_ptr<Engine> engine_;  // engine thread (others: Snapshot, under engine_mu_)
  struct Waiting {
    std::function<void(InferOutcome)> done;
    PayloadHandle payload = 0;  // its input tensors, released when it is answered
    QueryId query = 0;
    std::shared_ptr<std::atomic<bool>> client_gone;  // set by the frontend
    TaskId task = 0;
  };
  std::unordered_map<uint64_t, Waiting> waiting_;  // engine thread
  uint64_t next_cookie_ = 1;
  std::unordered_map<std::string, AppId> apps_;  // the profiled apps; read-only once created
  // Requests refused on the caller's thread (early_shed.h), each model's against its SLO.
  EarlyShed early_shed_;
  std::vector<size_t>
      shed_probe_;            // by TaskId: the model's EarlyShed probe; read-only once created
  size_t profiled_apps_ = 0;  // apps with an execution-time profile (ids below this)
  // Queries with no or an unprofiled app.
  int64_t unknown_app_queries_ GUARDED_BY(engine_mu_) = 0;
  // The rows a request may have (row_capacity.h) on the deployment's hardware types;
  // more are refused as bad requests (400), which are not SLO misses.
  RowCapacity row_capacity_;                // read-only once created
  std::vector<HardwareId> hardware_types_;  // read-only once created
  int64_t bad_requests_ GUARDED_BY(engine_mu_) = 0;
  std::vector<TypeCounters> by_type_ GUARDED_BY(engine_mu_);  // by HardwareId

  // The model repository, by TaskId. The state is written on the engine thread and read
  // by the frontends' threads (ModelState values).
  std::unique_ptr<std::atomic<int>[]> model_state_;
  struct ModelOp {
    bool active = false;
    bool load = false;
    std::vector<std::function<void(Status)>> waiters;  // answered when it is done
  };
  std::vector<ModelOp> model_ops_ GUARDED_BY(engine_mu_);
  int active_model_ops_ GUARDED_BY(engine_mu_) = 0;
  // The (worker, variant) pairs an unload released: what a load makes resident again.
  std::vector<std::vector<std::pair<WorkerId, VariantId>>> unloaded_ GUARDED_BY(engine_mu_);
  std::vector<int64_t> in_system_by_task_ GUARDED_BY(engine_mu_);  // queries waiting

  // The snapshot the engine thread last published (PublishAndAnswer), for Snapshot().
  mutable Mutex published_mu_;
  std::shared_ptr<const EngineSnapshot> published_ GUARDED_BY(published_mu_);
  // A Snapshot() asked for a fresher one than published_ (set by it, cleared on publishing).
  mutable std::atomic<bool> snapshot_wanted_{false};
  // The answers of the step in progress, sent after its snapshot is published.
  std::vector<std::pair<std::function<void(InferOutcome)>, InferOutcome>> step_answers_
      GUARDED_BY(engine_mu_);
  bool accepting_ GUARDED_BY(inbox_mu_) = false;
  bool stopping_ GUARDED_BY(inbox_mu_) = false;
  bool drain_deadline_set_ GUARDED_BY(inbox_mu_) = false;
  TimePoint drain_deadline_ GUARDED_BY(inbox_mu_){};
  // Stop(): past this (the drain deadline plus the grace again) batches still running
  // are abandoned and their queries answered 503, so Stop() is bounded.
  TimePoint abandon_deadline_ GUARDED_BY(inbox_mu_){};
  std::thread thread_;
};

}  // namespace sloserve

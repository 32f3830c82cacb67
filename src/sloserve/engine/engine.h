#pragma once
// The single-threaded scheduling engine (docs/architecture.md "engine"). It owns the
// central queue, per-worker queues (each partitioned by model: queries of different models
// share the pool, never a batch; docs/multi-model.md "Engine"), worker and model-residency
// states; calls the
// policies at decision points (arrival, action result, timer, plan tick) and applies
// their decisions after validating them. It talks to executors only through the typed
// worker protocol (worker_protocol.h): it sends RunBatch / LoadVariant / UnloadVariant
// and reacts to their results. It never reads a clock: the driver passes `now` into
// every call and asks NextWakeup() when to call OnTimer. Every submitted query ends
// exactly once, completed or dropped with a reason, through the QuerySink and metrics.
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "sloserve/core/query.h"
#include "sloserve/core/status.h"
#include "sloserve/engine/admission.h"
#include "sloserve/engine/decision_checks.h"
#include "sloserve/engine/metrics.h"
#include "sloserve/engine/model_metrics.h"
#include "sloserve/engine/model_queues.h"
#include "sloserve/engine/query_record.h"
#include "sloserve/engine/worker_protocol.h"
#include "sloserve/policy/dispatch/worker_eligibility.h"
#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/policy_spec.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct WorkerSpec {
  std::string name;
  HardwareId hardware = 0;
  // Workers naming the same machine share its memory; empty = a machine of its own.
  std::string machine;
  // Variants resident at start; empty = every variant profiled on the hardware.
  std::vector<VariantId> preload;
  bool preload_none = false;  // start cold (nothing resident)
};

// The policies' names, for log lines about their decisions.
struct PolicyNames {
  std::string dispatch = "dispatch", batching = "batching", placement = "placement",
              planning = "planning";
  // Names of PolicySet::model_batching's policies, by TaskId; a missing or empty one is
  // said as "batching of model '<task>'".
  std::vector<std::string> model_batching;
};

PolicyNames PolicyNamesOf(const PolicySpec& spec);

struct EngineOptions {
  size_t max_central_queue = 1'000'000;
  size_t max_worker_queue = 1'000'000;
  Duration series_interval = Seconds(1);
  TaskId task = 0;  // the deployment's task and SLO, handed to policies at Init
  Duration slo{};
  // Multi-model deployments (docs/multi-model.md): each model's SLO, indexed by TaskId; a
  // missing or zero entry = `slo` for `task`, the suite's default SLO for other tasks.
  std::vector<Duration> model_slo;
  // Attempts a query gets when its batch (or the load before it) fails; then it is
  // dropped as executor_error.
  int max_attempts = 2;
  // Overload protection (admission.h, docs/admission.md); off unless enabled.
  AdmissionOptions admission;
  std::function<void(OfflineJob)> submit_offline;                       // see PolicyContext
  std::function<void(const std::string&, int, int)> progress;           // see PolicyContext
  bool live = false;                                                    // see PolicyContext
  std::function<double(TaskId, TimePoint, TimePoint)> future_peak_qps;  // see PolicyContext
  const std::atomic<bool>* offline_cancel = nullptr;                    // see PolicyContext
  std::function<void(const std::string&)> degraded;                     // see PolicyContext
  PolicyNames names;
  // Outputs of results the engine discards (failed, stale, or not one per query): the
  // owner of the payload store releases them so nothing leaks. Empty = none kept.
  std::function<void(PayloadHandle)> release_output;
  // Warnings (an invalid policy decision, a stale result). Empty = stderr.
  std::function<void(const std::string&)> log;
  // At most this many variants held (loading or ready) on one worker: a load beyond it
  // first unloads the worker's least recently used ready variants (Ray Serve's
  // max_num_models_per_replica; the model-aware experiments' `multiplexed`). 0 = no bound.
  int max_resident_variants = 0;
  // [hardware]: the most workers of the type that are not retired; a plan adding one
  // beyond it is refused (an invalid decision, warned). Missing or < 0: no bound. serve
  // bounds the types whose workers run LibTorch in its process by the machine's cores.
  std::vector<int> max_workers_of_type;
  // Keep each completed query's latency phases (queue, exec, handoff: metrics.h) for
  // Phases(); serve turns it on, sim need not (its handoff is 0, its exec the profile's).
  bool latency_phases = false;
};

using EnginePolicies = PolicySet;

// Counters of the protocol and of rejected decisions (also in /metrics).
struct EngineCounters {
  int64_t actions_sent = 0;
  int64_t failed_results = 0;  // results with a non-OK status
  int64_t stale_results = 0;   // results for no action in flight (duplicate, unknown)
  int64_t invalid_decisions = 0;
  int64_t requeued = 0;  // queries re-queued after a failed batch
  int64_t loads = 0;
  int64_t unloads = 0;
  int64_t prefetches = 0;
  int64_t workers_added = 0;
};

class Engine {
 public:
  using QuerySink = std::function<void(const QueryRecord&)>;

  // Validates the deployment and initialises the policies. `suite` and `executor`
  // must outlive the engine.
  static StatusOr<std::unique_ptr<Engine>> Create(const ProfileSuite* suite,
                                                  std::vector<WorkerSpec> workers,
                                                  EnginePolicies policies, WorkerExecutor* executor,
                                                  EngineOptions options, uint64_t seed);

  // A new query (arrival = now, deadline set by the caller). Assigns and returns its id.
  // A query refused by admission is reported dropped (kQueueFull) before this returns.
  QueryId Submit(Query q, TimePoint now);
  // The result of an action this engine sent (any order; stale ones are counted, ignored).
  void OnResult(const ActionResult& result, TimePoint now);
  // Re-asks policies that requested a wake-up at or before `now`.
  void OnTimer(TimePoint now);
  // Asks the planning policy (if any) for the deployment and applies it. The driver calls
  // this every plan interval.
  void OnPlanTick(TimePoint now);
  bool has_planning() const { return policies_.planning != nullptr; }
  // The planning policy (nullptr without one), for tests and reports to read its state.
  const PlanningPolicy* planning() const { return policies_.planning.get(); }
  TimePoint NextWakeup() const;
  // Drops everything still queued (kShutdown); running batches still complete.
  void DropAllQueued(TimePoint now);

  void set_sink(QuerySink sink) { sink_ = std::move(sink); }
  size_t in_system() const { return in_system_; }
  // Where the queries in the system wait (the central queue, each worker's queue with the
  // worker's phase, model and pin), for errors such as a run that ends with a backlog.
  std::string DescribeBacklog() const;
  // Rows waiting for a batch (in the system, not running): what admission weighs.
  int64_t queued_rows() const { return system_rows_ - running_rows_; }
  // Actions sent whose results have not come back.
  size_t actions_in_flight() const { return in_flight_; }
  const std::vector<WorkerView>& workers() const { return views_; }
  const std::vector<MachineView>& machines() const { return machines_; }
  const MetricsCollector& metrics() const { return metrics_; }
  const AdmissionControl& admission() const { return admission_; }
  // Whether admission (when enabled) would refuse one row of model `task` with `slo` at
  // resolved priority `level` now: that model's admission, its own waiting rows.
  bool WouldShed(TaskId task, Duration slo, int32_t level, TimePoint now);
  // The most rows a query of model `task` with `slo` may have and be judged on its wait
  // (AdmissionControl::MaxRowsAlone): WouldShed's answer holds for those only.
  int64_t MaxRowsAlone(TaskId task, Duration slo);
  // Drops query `id` if it is still queued (its client went away): true if it was.
  bool Cancel(QueryId id, TimePoint now);
  // The executor lost contact with worker `w` (reachable = false) or regained it (remote
  // workers, docs/remote-workers.md). An unreachable worker receives no queries and its
  // queued ones go back to the central queue for the others; its running batch fails
  // through its result as usual. Reachable again, it serves if its phase lets it. While
  // no worker that is not retired is reachable, the central queue's queries (arrivals,
  // re-queued ones) end at once as executor_error: nothing could run them, and nothing
  // would drop them at their deadline (queries expire when a worker forms a batch).
  void SetWorkerReachable(WorkerId w, bool reachable, TimePoint now);
  // The model repository (serve's load/unload of a task, docs/protocol.md): makes `v`
  // resident on `w` (a LoadVariant, evicting as the machine's memory requires) or releases
  // it (an UnloadVariant). False when nothing was sent: already resident or on the way
  // (load); not resident, pinned, or `w`'s current batch runs it (unload).
  bool RequestLoad(WorkerId w, VariantId v, TimePoint now);
  bool RequestUnload(WorkerId w, VariantId v, TimePoint now);
  const EngineCounters& counters() const { return counters_; }
  // The pool's totals over [0, end].
  MetricsSummary Summarize(TimePoint end) const;
  // Per model (docs/multi-model.md "Engine"): one summary per task of the suite, indexed
  // by TaskId (a model no query asked for has arrived == 0). Counts, rates, latencies,
  // batches, cold starts and `utilization` (the busy time of the model's batches over
  // workers x elapsed) are the model's; they sum to Summarize's, except queries naming no
  // task of the suite (dropped `unservable` at arrival), which are in the totals only.
  // Cost and core fields are the pool's and stay 0 here. With a one-task suite the one
  // entry is Summarize(end) itself (cost included); otherwise quantiles come from a
  // coarser histogram (about 1% relative error; model_metrics.h).
  std::vector<MetricsSummary> SummarizeByModel(TimePoint end) const;
  // The SLO of model `task`: EngineOptions::model_slo, else `slo` for `task`, else the
  // task's default SLO in the suite.
  Duration ModelSlo(TaskId task) const;
  // Accounts the cores provisioned up to `end` in the time series (its last intervals'
  // core_seconds); the simulator calls it once when the run is over.
  void CloseSeries(TimePoint end);
  const ProfileSuite& suite() const { return *suite_; }

 private:
  // A lifecycle action in flight on a worker.
  struct PendingLifecycle {
    ActionId id;
    VariantId variant;
    bool load;
    TimePoint sent;
  };
  struct WorkerState {
    ModelQueues queue;                // slots, per model, deadline order
    ActionId running = 0;             // the RunBatch in flight
    VariantId awaiting_load = kNoId;  // the formed batch waits for this variant's load
    TimePoint batch_formed{};         // when the current batch was formed (incl. cold start)
    VariantId batch_variant = kNoId;
    TaskId batch_task = kNoId;          // the model of the current batch
    std::vector<uint32_t> batch_slots;  // the current batch (waiting for a load, or running)
    TimePoint wake{kTimeInfinite};
    std::vector<uint64_t> lru;                // last use per variant, for eviction
    std::vector<bool> loaded_before;          // per variant: a load was sent here before
    std::vector<PendingLifecycle> lifecycle;  // loads / unloads in flight
    int start_loads = 0;                      // a new worker serves once these loads have succeeded
    bool removing = false;                    // retire once drained
    bool unreachable = false;                 // the executor lost contact (SetWorkerReachable)
  };
  struct Wake {
    TimePoint at;
    WorkerId worker;
    bool operator>(const Wake& o) const { return at > o.at || (at == o.at && worker > o.worker); }
  };

  Engine(const ProfileSuite* suite, EnginePolicies policies, WorkerExecutor* executor,
         EngineOptions options);

  uint32_t AllocSlot(const Query& q);
  void FreeSlot(uint32_t slot) { free_slots_.push_back(slot); }
  // The batching policy of model `task` (PolicySet::model_batching, else the pool's).
  BatchingPolicy& BatchingFor(TaskId task) {
    return task < policies_.model_batching.size() && policies_.model_batching[task]
               ? *policies_.model_batching[task]
               : *policies_.batching;
  }
  // The name of model `task`'s batching policy, for warnings.
  std::string BatchingName(TaskId task) const;
  // Admission control of model `task` (its SLO and variants); the pool's for options.task.
  AdmissionControl& AdmissionFor(TaskId task);
  // Re-queues `slot` centrally (a failed batch, an unreachable worker).
  void RequeueCentral(uint32_t slot) { central_.Insert(slot, table_, /*check_ids=*/false); }
  // Starts the batch of decision_ on worker `w` (variant `v`, queries `take_slots`).
  void StartBatch(WorkerId w, VariantId v, TaskId task, std::vector<uint32_t>& take_slots,
                  int64_t rows, TimePoint now);
  // The queue positions decision `d` removes (its batch, drops and rejects; sorted, unique),
  // with the dropped and rejected ones' slots in drop_slots_ / reject_slots_.
  const std::vector<uint32_t>& PositionsToRemove(const std::deque<uint32_t>& queue,
                                                 BatchDecision& d);
  // A plan dedicated `w` to one model: other models' queries go back centrally.
  void UnqueueOtherModels(WorkerId w);
  // Whether plan `p`'s model is valid beside its pin (warned about, naming `worker`, if not).
  bool ValidPlanModel(const WorkerPlan& p, const std::string& worker);
  // The model a worker dedicated to `current` serves after plan `p` (WorkerPlan::model).
  TaskId PlannedModel(const WorkerPlan& p, TaskId current) const;
  // serving_: per model, the workers not retired whose hardware serves it.
  void RecountServing();
  // Tells the batching (and so selection) policies the workers changed.
  void NotifyWorkersChanged();
  void Redispatch(TimePoint now);
  void RunDispatch(TimePoint now);
  // True when every worker not retired is unreachable (and at least one is).
  bool NoWorkerReachable() const;
  // Queues `slot` on worker `w` as policy `by` decided; false (and the query reported
  // dropped) when full, or refused when `w` is pinned to a variant of another model.
  bool EnqueueOnWorker(uint32_t slot, WorkerId w, const std::string& by, TimePoint now);
  void TryStart(WorkerId w, TimePoint now);
  // TryStart, then the central queue again if the worker dropped all it held.
  void StartThenRedispatch(WorkerId w, TimePoint now);
  // Idle with an empty queue while queries wait centrally.
  bool Drained(WorkerId w) const;
  // One dispatch round; true when a worker it gave queries to is drained again.
  bool DispatchOnce(TimePoint now);
  // Shared-queue dispatch: idle workers, in turn, form batches from the central queue.
  void StartIdleOnSharedQueue(TimePoint now);
  void SendRun(WorkerId w, TimePoint now);
  // Starts loading `v` on `w` (evicting LRU variants of its machine as memory requires).
  void SendLoad(WorkerId w, VariantId v, TimePoint now);
  void SendUnload(WorkerId w, VariantId v, TimePoint now);
  void OnRunResult(WorkerId w, const ActionResult& r, TimePoint now);
  void ReleaseOutputs(const ActionResult& r);
  void OnLifecycleResult(WorkerId w, const PendingLifecycle& p, const ActionResult& r,
                         TimePoint now);
  // The queries of a batch that failed or could not start: re-queued, or dropped as
  // expired / executor_error.
  void FailBatch(WorkerId w, const Status& status, TimePoint now);
  void BecomeIdle(WorkerId w, TimePoint now);
  WorkerId AddWorker(const WorkerPlan& p, TimePoint now);
  MachineId NewMachine(std::string name, HardwareId hardware);
  void ApplyPlan(TimePoint now);
  void MaybeRetire(WorkerId w, TimePoint now);
  // An active worker with nothing queued, running or loading sends its next prefetch
  // load (WorkerPlan::prefetch) if the machine's memory holds it without evicting.
  void MaybePrefetch(WorkerId w, TimePoint now);
  void Invalid(const std::string& policy, const std::string& what);
  void Warn(const std::string& line);
  void Log(const std::string& line) const;  // options_.log, else stderr
  // Workers serving or starting, by HardwareId.
  std::vector<int> ServingByType() const;
  // Logs the change of ServingByType since `before` (and the workers added, by type).
  void LogPlanChange(const std::vector<int>& before, const std::vector<int>& added);
  void SetResidency(WorkerId w, VariantId v, Residency r);
  static QueryRecord RecordOf(const Query& q);  // identity fields; outcome filled by callers
  void Finish(uint32_t slot, QueryRecord& r);
  void DropSlot(uint32_t slot, DropReason reason, TimePoint now);
  void SyncQueueView(WorkerId w);
  Duration ExpectedBatch(HardwareId h, VariantId v, int32_t rows);
  // ExpectedBatch's memo: [hardware * variants + variant][rows], -1 = not computed yet.
  std::vector<std::vector<Duration>> expected_;

  const ProfileSuite* suite_;
  EnginePolicies policies_;
  WorkerExecutor* executor_;
  EngineOptions options_;
  QuerySink sink_;
  MetricsCollector metrics_;
  EngineCounters counters_;

  std::vector<Query> table_;       // slot -> query
  std::vector<uint8_t> attempts_;  // slot -> failed batches so far
  std::vector<uint32_t> free_slots_;
  // Partitioned by model under the shared-queue topology (workers batch from it); one
  // queue of every model otherwise (dispatch assigns from it).
  ModelQueues central_{false};
  BatchChecks checks_;
  uint64_t round_ = 0;  // TryStart rounds (ModelQueues::Queue::declined)
  // Per model, when the suite has more than one task (else the totals are the model's).
  std::vector<ModelMetrics> model_metrics_;
  std::vector<std::unique_ptr<AdmissionControl>> model_admission_;  // lazily, by TaskId
  size_t busy_workers_ = 0;
  size_t unreachable_workers_ = 0;  // SetWorkerReachable
  size_t next_idle_ = 0;
  std::vector<WorkerView> views_;
  std::vector<WorkerState> states_;
  std::vector<MachineView> machines_;
  std::priority_queue<Wake, std::vector<Wake>, std::greater<>> wakes_;
  std::vector<double> variant_accuracy_;
  // Cost integrates the active workers' prices over time (planning changes them).
  void AccrueCost(TimePoint now);
  void RecomputeActiveCost();
  // Keeps an arrival's size for PlanningInput::recent_sizes.
  void RecordSize(int32_t size);
  double active_price_per_hour_ = 0;
  int active_cores_ = 0;
  TimePoint cost_clock_{};
  double cost_usd_ = 0;
  double core_seconds_ = 0;
  // Multi-model: the part of the above of the workers dedicated to each model
  // (WorkerView::model), indexed by TaskId; undedicated workers belong to no model.
  std::vector<double> model_price_per_hour_;
  std::vector<int> model_cores_;
  int64_t arrivals_since_plan_ = 0;
  // The sizes of the deployment task's last PlanningInput::kRecentSizes arrivals (a ring from
  // recent_sizes_next_; kept only for a planning policy that reads them: record_sizes_),
  // and their oldest-first copy.
  bool record_sizes_ = false;
  std::vector<int32_t> recent_sizes_;
  size_t recent_sizes_next_ = 0;
  std::vector<int32_t> plan_sizes_;
  TimePoint last_plan_{};
  std::vector<double> rate_history_;
  // Per model when the suite has several (PlanningInput::model_qps, model_rate_history).
  std::vector<int64_t> model_arrivals_;
  std::vector<double> model_qps_;
  std::vector<std::vector<double>> model_rate_history_;
  std::vector<int> serving_;  // RecountServing
  DeploymentPlan plan_;

  QueryId next_query_id_ = 1;
  ActionId next_action_id_ = 1;
  uint64_t use_clock_ = 0;
  size_t in_system_ = 0;
  // Admission: rows in the system, and of those in formed batches (the rest wait).
  AdmissionControl admission_;
  int64_t system_rows_ = 0;
  int64_t running_rows_ = 0;
  // The same per model (TaskId; several models only): each model's admission judges the
  // wait behind its own queue, not behind every model's.
  std::vector<int64_t> model_system_rows_;
  std::vector<int64_t> model_running_rows_;
  // Rows a query of model `task` waits behind: its model's own waiting rows (in the
  // system, not in a formed batch) when every active worker serving it serves only it
  // (dedicated, or hardware profiled for it alone), else every model's (the workers it
  // shares run the other models' queries too, EDF across models).
  int64_t QueuedRowsOf(TaskId task) const;
  // By TaskId (several models only): some active worker serving the model serves another
  // one too. Recomputed with the active workers.
  std::vector<uint8_t> model_shares_workers_;
  void AddRunningRows(TaskId task, int64_t rows);
  // The workers taking queries, for the admission of model `task`: only those that serve
  // it (worker_eligibility.h), so a model's capacity is not its neighbours'.
  std::vector<std::pair<WorkerId, HardwareId>> ServingWorkers(TaskId task) const;
  WorkerEligibility eligibility_;
  // Drops the queue's head while its deadline can no longer be met (admission).
  bool DropExpiredHead(ModelQueues& queues, ModelQueues::Queue& queue, WorkerId w, bool shared,
                       TimePoint now);
  int64_t RowsOf(const std::vector<uint32_t>& slots) const;
  // Admission: trims the batching decision's `take` to the queries the profile expects
  // to finish by their deadlines; true when its first query was dropped (late even alone).
  bool TrimLateBatch(ModelQueues& queues, ModelQueues::Queue& queue, WorkerId w, bool shared,
                     VariantId v, TimePoint now);
  size_t in_flight_ = 0;
  int64_t warnings_ = 0;

  // Scratch buffers reused across decisions (no allocation on the hot path).
  BatchDecision decision_;
  std::vector<Assignment> assignments_;
  std::vector<uint32_t> removed_;
  std::vector<uint32_t> positions_;
  std::vector<uint32_t> drop_slots_;
  std::vector<uint32_t> reject_slots_;
  std::vector<uint32_t> scratch_slots_;
  std::vector<Query> batch_queries_;
  std::vector<CompletedRequest> completed_;  // BatchingPolicy::OnBatchComplete payload
  std::vector<WorkerId> touched_;
};

}  // namespace sloserve

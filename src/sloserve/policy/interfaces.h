#pragma once
// The decision interfaces. A policy is handed `now` and read-only views and returns a
// decision; it never reads a clock, sleeps, starts threads or does I/O, so the same
// code runs in `sloserve sim` and `sloserve serve` (ARCHITECTURE.md, "Decision
// interfaces"). Decisions are written into caller-owned structs so the hot path does
// not allocate.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/policy/params.h"
#include "sloserve/policy/views.h"

namespace sloserve {

// --- selection: which variant, and how many queries, for the next batch on a worker ---
struct SelectionDecision {
  VariantId variant = kNoId;  // kNoId: no variant can serve this task here
  int max_rows = 0;           // largest batch (in rows) to form with it
};

class SelectionPolicy {
 public:
  virtual ~SelectionPolicy() = default;
  virtual Status Init(const PolicyContext& ctx) {
    (void)ctx;
    return OkStatus();
  }
  // `head` is the query the batch is formed around (earliest deadline of its task).
  virtual SelectionDecision Choose(const WorkerView& worker, const QueueView& queue,
                                   const Query& head, TimePoint now) = 0;
  // Every arrival at the system (for load monitors); default ignores it.
  virtual void OnArrival(const Query& q, TimePoint now) {
    (void)q;
    (void)now;
  }
  // Whether the variant it picks follows the load (RAMSIS, Jellyfish+, ModelSwitching):
  // when load rises it moves to faster variants, so admission control prices the queue
  // with what the deployment clears at its fastest, not with the batches it formed at
  // the lighter load before (which would shed the very step up it exists to absorb).
  virtual bool follows_load() const { return false; }
  // The pool's workers, at Init and whenever a plan (or a worker starting, leaving or
  // coming back) changes which of them are active or which model they serve; for
  // selections that plan for a worker count (RAMSIS). Default: ignored.
  virtual void OnWorkersChanged(const std::vector<WorkerView>& workers) { (void)workers; }
};

// --- batching: which queued queries form the next batch on a worker ---
struct BatchDecision {
  enum class Kind { kIdle, kRun, kWaitUntil };
  Kind kind = Kind::kIdle;
  VariantId variant = kNoId;
  std::vector<uint32_t> take;    // queue positions to run, ascending
  std::vector<uint32_t> drop;    // queue positions to drop (reported, never silently lost)
  std::vector<uint32_t> reject;  // positions no variant here can ever serve (unservable)
  TimePoint wait_until{};        // kWaitUntil: ask again then (or on the next arrival)

  void Clear() {
    kind = Kind::kIdle;
    variant = kNoId;
    take.clear();
    drop.clear();
    reject.clear();
  }
};

// What the executor observed for one finished batch, for policies that learn from it
// (ORLOJ's online profiler, section 3.2). Valid only during the OnBatchComplete call.
struct CompletedRequest {
  QueryId id = 0;
  AppId app = 0;
  // The request's execution time alone, as the executor drew (simulated, emulated) or
  // measured it before padding the batch to its longest member; negative when the
  // executor has none (static models, whose batch time is the profile's latency at k).
  Duration solo{-1};
};

struct BatchCompletion {
  TimePoint now{};
  WorkerId worker = 0;
  HardwareId hardware = 0;
  VariantId variant = kNoId;
  Duration duration{};                         // launch to completion (incl. any cold start)
  std::span<const CompletedRequest> requests;  // in launch order
};

class BatchingPolicy {
 public:
  virtual ~BatchingPolicy() = default;
  virtual Status Init(const PolicyContext& ctx) {
    (void)ctx;
    return OkStatus();
  }
  virtual void NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                         BatchDecision* out) = 0;
  virtual void OnArrival(const Query& q, TimePoint now) {
    (void)q;
    (void)now;
  }
  // A batch finished (once per batch, in `sim` and `serve` alike), after its queries were
  // reported and before the worker's next NextBatch. Default: ignored. Like a decision,
  // it must not block; costly work belongs at a cadence, not in every call.
  virtual void OnBatchComplete(const BatchCompletion& c) { (void)c; }
  // See SelectionPolicy::OnWorkersChanged; a batching policy with a selection forwards it.
  virtual void OnWorkersChanged(const std::vector<WorkerView>& workers) { (void)workers; }
};

// --- dispatch: which pending query goes to which worker ---
struct Assignment {
  uint32_t position = 0;  // position in the central queue view
  WorkerId worker = 0;
};

class DispatchPolicy {
 public:
  virtual ~DispatchPolicy() = default;
  virtual Status Init(const PolicyContext& ctx) {
    (void)ctx;
    return OkStatus();
  }
  // Called after each arrival and whenever a worker becomes idle while queries wait
  // centrally. Unassigned queries stay in the central queue (central topology).
  virtual void Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                      TimePoint now, std::vector<Assignment>* out) = 0;
  // True: queries stay in the central queue and each idle worker's batching policy forms
  // its batch straight from it ("workers grab batches from the central queue").
  virtual bool shared_queue() const { return false; }
};

// --- placement: which machine a query should run on, given model caches ---
// Consulted for each arrival before dispatch. A placement that returns a worker sends
// the query straight to that worker's queue (model-aware routing); kNoId leaves the
// query to the dispatch policy. `prefetch` asks the engine to start loading a variant on
// a worker now (when that worker is idle), so a later query finds it resident. `unload`
// names variants `worker` should give back first (a model cache's LRU evictions); the
// engine unloads those that are ready and not about to run.
struct PlacementDecision {
  WorkerId worker = kNoId;
  WorkerId prefetch_worker = kNoId;
  VariantId prefetch_variant = kNoId;
  std::vector<VariantId> unload;
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual Status Init(const PolicyContext& ctx) {
    (void)ctx;
    return OkStatus();
  }
  virtual PlacementDecision Place(const Query& q, const std::vector<WorkerView>& workers,
                                  const std::vector<MachineView>& machines, TimePoint now) = 0;
  // Completions, for placements that learn service and load times (adaptive). Default:
  // ignored. `took`: the load's send to its result.
  virtual void OnBatchComplete(const BatchCompletion& c) { (void)c; }
  virtual void OnLoadComplete(WorkerId w, VariantId v, Duration took, TimePoint now) {
    (void)w;
    (void)v;
    (void)took;
    (void)now;
  }
};

// --- planning: what the deployment should be ---
struct PlanningInput {
  TimePoint now{};
  double observed_qps = 0;  // arrivals per second over the last plan interval
  // Arrivals per second of every plan interval so far (oldest first, at most the last
  // 3,600), for forecasters; the last entry is observed_qps.
  std::span<const double> rate_history;
  // Per model (indexed by TaskId; empty when the suite has one task): arrivals per second
  // of that model over the last plan interval, and of every interval so far (oldest
  // first, at most the last 3,600; the last entry is model_qps[t]).
  std::span<const double> model_qps;
  std::span<const std::vector<double>> model_rate_history;
  // Sizes (rows) of the most recent arrivals of the deployment's task (PolicyContext::
  // task; a server also answers its suite's other models), oldest first, at most
  // kRecentSizes of them: the query-size sample of Kairos' planning (its "query monitor").
  // Empty unless the policy reads_recent_sizes().
  static constexpr size_t kRecentSizes = 10'000;
  std::span<const int32_t> recent_sizes;
  const std::vector<WorkerView>* workers = nullptr;
  const std::vector<MachineView>* machines = nullptr;
};

// WorkerPlan::model: undo a worker's dedication to one model.
inline constexpr TaskId kAnyModel = kNoId - 1;

// One worker's part of a plan. An existing worker (`worker` = its id) takes the fields
// as its new settings; `worker` = kNoId adds a worker, which serves only after the
// results of loading `load` (default: its pinned variant) have come back.
struct WorkerPlan {
  WorkerId worker = kNoId;
  bool active = true;         // false: drains (no new queries) and can be reactivated
  bool remove = false;        // drains, then is retired for good (ids are never reused)
  HardwareId hardware = 0;    // new workers
  MachineId machine = kNoId;  // new workers: kNoId = a machine of its own
  int cores = 0;              // 0 = keep (new workers: the hardware's cores)
  VariantId pinned = kNoId;   // the variant its batches run (kNoId: the policies choose)
  // The one model it serves (kNoId: keep its dedication; kAnyModel: undo it, the worker
  // serves every model its hardware does; a pinned variant implies its model, and a plan
  // naming another model beside a pin is refused). Its selection policy chooses among that
  // model's variants when not pinned. Unpinning (pinned = kNoId) keeps the dedication.
  TaskId model = kNoId;
  // Share of the load for quota dispatchers (0: none); on several models, relative to the
  // other workers serving the same model (a model's workers' quotas sum to 1).
  double quota = 0;
  std::vector<VariantId> load;  // new workers: variants to load before serving
  // New workers: variants to load once serving, one at a time while idle (nothing queued,
  // nothing running), each only if the machine's memory holds it without evicting.
  std::vector<VariantId> prefetch;
};

struct DeploymentPlan {
  bool change = false;
  // Workers not named keep their settings. The engine keeps at least one worker active.
  std::vector<WorkerPlan> workers;
  void Clear() {
    change = false;
    workers.clear();
  }
};

class PlanningPolicy {
 public:
  virtual ~PlanningPolicy() = default;
  virtual Status Init(const PolicyContext& ctx) {
    (void)ctx;
    return OkStatus();
  }
  virtual void Plan(const PlanningInput& input, DeploymentPlan* out) = 0;
  // Whether Plan reads PlanningInput::recent_sizes: the engine keeps that sample (a store
  // per arrival, a copy of up to 40 KB per tick) only for a policy that does.
  virtual bool reads_recent_sizes() const { return false; }
};

}  // namespace sloserve

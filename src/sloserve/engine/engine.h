#pragma once
// The single-threaded scheduling engine (ARCHITECTURE.md "engine"). It owns the central
// queue, per-worker queues and worker states, calls the policies at decision points
// (arrival, completion, timer) and applies their decisions. It never reads a clock: the
// driver (simulator or real-time runtime) passes `now` into every call and asks
// NextWakeup() when to call OnTimer. Every submitted query ends exactly once, either
// completed or dropped, through the QuerySink and the metrics.
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "sloserve/core/query.h"
#include "sloserve/core/status.h"
#include "sloserve/engine/executor_port.h"
#include "sloserve/engine/metrics.h"
#include "sloserve/engine/query_record.h"
#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/policy_spec.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct WorkerSpec {
  std::string name;
  HardwareId hardware = 0;
  // Variants resident at start; empty = every variant profiled on the hardware.
  std::vector<VariantId> preload;
  bool preload_none = false;  // start cold (nothing resident)
};

struct EngineOptions {
  size_t max_central_queue = 1'000'000;
  size_t max_worker_queue = 1'000'000;
  Duration series_interval = Seconds(1);
  TaskId task = 0;  // the deployment's task and SLO, handed to policies at Init
  Duration slo{};
  std::function<void(std::function<void()>)> run_offline;      // see PolicyContext
  std::function<void(const std::string&, int, int)> progress;  // see PolicyContext
};

using EnginePolicies = PolicySet;

class Engine {
 public:
  using QuerySink = std::function<void(const QueryRecord&)>;

  // Validates the deployment and initialises the policies. `suite` and `executor`
  // must outlive the engine.
  static StatusOr<std::unique_ptr<Engine>> Create(const ProfileSuite* suite,
                                                  std::vector<WorkerSpec> workers,
                                                  EnginePolicies policies, ExecutorPort* executor,
                                                  EngineOptions options, uint64_t seed);

  // A new query (arrival = now, deadline set by the caller). Assigns and returns its id.
  // A query refused by admission is reported dropped (kQueueFull) before this returns.
  QueryId Submit(Query q, TimePoint now);
  void OnBatchComplete(WorkerId worker, BatchId batch, TimePoint now);
  // Re-asks policies that requested a wake-up at or before `now`.
  void OnTimer(TimePoint now);
  // Asks the planning policy (if any) for the deployment and applies it. The driver calls
  // this every plan interval.
  void OnPlanTick(TimePoint now);
  bool has_planning() const { return policies_.planning != nullptr; }
  TimePoint NextWakeup() const;
  // Drops everything still queued (kShutdown); running batches still complete.
  void DropAllQueued(TimePoint now);

  void set_sink(QuerySink sink) { sink_ = std::move(sink); }
  size_t in_system() const { return in_system_; }
  const std::vector<WorkerView>& workers() const { return views_; }
  const MetricsCollector& metrics() const { return metrics_; }
  MetricsSummary Summarize(TimePoint end) const;
  const ProfileSuite& suite() const { return *suite_; }

 private:
  struct WorkerState {
    std::deque<uint32_t> queue;   // slots, deadline order
    bool arrival_ordered = true;  // every insertion so far went to the back
    BatchId running = 0;
    TimePoint running_start{};
    VariantId running_variant = kNoId;
    std::vector<uint32_t> running_slots;
    std::vector<Duration> running_solo;  // executor's per-query times alone (may be empty)
    TimePoint wake{kTimeInfinite};
    std::vector<uint64_t> lru;  // last use per variant, for eviction
  };
  struct Wake {
    TimePoint at;
    WorkerId worker;
    bool operator>(const Wake& o) const { return at > o.at || (at == o.at && worker > o.worker); }
  };

  Engine(const ProfileSuite* suite, EnginePolicies policies, ExecutorPort* executor,
         EngineOptions options);

  uint32_t AllocSlot(const Query& q);
  void FreeSlot(uint32_t slot) { free_slots_.push_back(slot); }
  // Inserts in (deadline, id) order; returns false when it did not go to the back.
  static bool InsertByDeadline(std::deque<uint32_t>* queue, uint32_t slot,
                               const std::vector<Query>& table);
  void RemovePositions(std::deque<uint32_t>* queue, const std::vector<uint32_t>& ascending,
                       std::vector<uint32_t>* removed);
  void RunDispatch(TimePoint now);
  // Queues `slot` on worker `w`; false (and the query reported dropped) when full.
  bool EnqueueOnWorker(uint32_t slot, WorkerId w, TimePoint now);
  void TryStart(WorkerId w, TimePoint now);
  // Shared-queue dispatch: idle workers, in turn, form batches from the central queue.
  void StartIdleOnSharedQueue(TimePoint now);
  Duration EnsureLoaded(WorkerId w, VariantId v);
  static QueryRecord RecordOf(const Query& q);  // identity fields; outcome filled by callers
  void Finish(uint32_t slot, QueryRecord& r);
  void DropSlot(uint32_t slot, DropReason reason, TimePoint now);
  void SyncQueueView(WorkerId w);

  const ProfileSuite* suite_;
  EnginePolicies policies_;
  ExecutorPort* executor_;
  EngineOptions options_;
  QuerySink sink_;
  MetricsCollector metrics_;

  std::vector<Query> table_;  // slot -> query
  std::vector<uint32_t> free_slots_;
  std::deque<uint32_t> central_;
  bool central_arrival_ordered_ = true;
  size_t busy_workers_ = 0;
  size_t next_idle_ = 0;
  std::vector<WorkerView> views_;
  std::vector<WorkerState> states_;
  std::priority_queue<Wake, std::vector<Wake>, std::greater<>> wakes_;
  std::vector<double> variant_accuracy_;
  // Cost integrates the active workers' prices over time (planning changes them).
  void AccrueCost(TimePoint now);
  double active_price_per_hour_ = 0;
  int active_cores_ = 0;
  TimePoint cost_clock_{};
  double cost_usd_ = 0;
  double core_seconds_ = 0;
  int64_t arrivals_since_plan_ = 0;
  TimePoint last_plan_{};
  DeploymentPlan plan_;

  QueryId next_query_id_ = 1;
  BatchId next_batch_id_ = 1;
  uint64_t use_clock_ = 0;
  size_t in_system_ = 0;

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

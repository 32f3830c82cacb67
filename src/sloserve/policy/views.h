#pragma once
// Read-only views the engine hands to policies. Policies never hold them across calls.
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/query.h"
#include "sloserve/core/time.h"

namespace sloserve {

class ProfileSuite;

// A variant's life on a worker (docs/architecture.md, "Model lifecycle"): the engine
// moves it by sending LoadVariant / UnloadVariant and reading their results.
enum class Residency : uint8_t { kAbsent, kLoading, kReady, kUnloading };

// A worker's life: a worker a plan adds is kStarting until its loads succeed; a worker
// a plan removes drains (finishes its queue, gets nothing new) and then is retired.
enum class WorkerPhase : uint8_t { kStarting, kActive, kDraining, kRetired };

// A machine holds workers; they share its memory (model residency) and cores.
struct MachineView {
  MachineId id = 0;
  std::string name;
  HardwareId hardware = 0;
  double memory_mb = 0;  // 0 = unlimited
  int cores = 0;
  double used_mb = 0;  // variants loading, ready or unloading on its workers
};

// A worker as policies see it.
struct WorkerView {
  // What dispatchers scan for every query first, together in the first cache line.
  WorkerId id = 0;
  HardwareId hardware = 0;
  bool busy = false;   // running a batch, or loading the variant its next batch needs
  bool active = true;  // phase == kActive: receives new queries
  WorkerPhase phase = WorkerPhase::kActive;
  VariantId last_variant = kNoId;
  size_t queue_length = 0;   // queries in the worker's local queue
  int64_t queued_rows = 0;   // sum of their sizes
  TimePoint busy_until{};    // expected completion of the running batch (if busy)
  VariantId pinned = kNoId;  // a plan pinned the variant it serves (kNoId: any)
  // The one model (task) it serves: a plan's dedication, or its pinned variant's model.
  // kNoId: any model its hardware serves. Dispatchers send it no other model's queries.
  TaskId model = kNoId;
  MachineId machine = 0;
  double quota = 0;                  // its share of the load under a quota plan (0: none)
  int cores = 0;                     // cores given to this worker (a plan may change them)
  std::vector<Residency> residency;  // indexed by VariantId
  // Variants a plan asked it to load while idle, not sent yet (WorkerPlan::prefetch): a
  // selection policy may count them as held (it will hold them soon).
  std::vector<VariantId> prefetch;
  std::string name;

  // Resident: a batch on `v` starts without a cold start.
  bool ready(VariantId v) const {
    return v < residency.size() && residency[v] == Residency::kReady;
  }
};

// A queue of queries, ordered by (deadline, id): earliest deadline first.
class QueueView {
 public:
  QueueView(const std::deque<uint32_t>* slots, const std::vector<Query>* table,
            bool arrival_ordered = false)
      : slots_(slots), table_(table), arrival_ordered_(arrival_ordered) {}
  // True when deadline order is also arrival order (e.g. one SLO for all queries), so
  // FIFO and EDF pick the same queries without a scan.
  bool arrival_ordered() const { return arrival_ordered_; }
  size_t size() const { return slots_->size(); }
  bool empty() const { return slots_->empty(); }
  const Query& at(size_t i) const { return (*table_)[(*slots_)[i]]; }
  const Query& front() const { return at(0); }

 private:
  const std::deque<uint32_t>* slots_;
  const std::vector<Query>* table_;
  bool arrival_ordered_;
};

struct OfflineJob {
  std::string what;  // for logs
  std::function<std::function<void()>()> work;
};

// What every policy may read about the deployment it decides for.
struct PolicyContext {
  const ProfileSuite* suite = nullptr;
  std::vector<WorkerView> workers;  // initial state: ids, hardware, preloads
  uint64_t seed = 1;
  // The deployment's task and SLO (policies that plan offline for an SLO, e.g. RAMSIS;
  // queries still carry their own deadlines).
  TaskId task = 0;
  Duration slo{};
  std::vector<MachineView> machines;
  // Offline work (generating a missing RAMSIS policy, a solver run, a profile rebuild):
  // `work` runs off the decision path (serve: a bounded pool; sim: at once, its result
  // delivered after a configurable virtual duration) and returns the step that publishes
  // its result; the driver runs that step on the engine thread as an event, so a policy's
  // decisions never wait on a lock the work holds. Empty = not available.
  std::function<void(OfflineJob)> submit_offline;
  // Reports progress of long work at Init (e.g. generating a RAMSIS policy set): what is
  // being done, steps done and the current estimate of the total. Empty = nobody listens.
  std::function<void(const std::string& what, int done, int total)> progress;
  // True in a real-time server (serve), false in sim. A live server may answer with a
  // fallback while long preparation (e.g. a RAMSIS policy set) runs as an offline job;
  // sim keeps preparing at Init, so its results do not depend on how long that takes.
  bool live = false;
  // Set when offline work should stop early (the server is shutting down); long offline
  // work polls it. Null = never.
  const std::atomic<bool>* offline_cancel = nullptr;
  // A live policy serving a fallback says why ("" when it no longer does); readiness
  // reports it. Empty = nobody listens.
  std::function<void(const std::string& note)> degraded;
  // sim only: the largest per-second arrival count of model (task) `t` in [from, to),
  // from the run's own arrivals: what an oracle that knows the load plans for (the
  // composed planner's `forecaster: oracle`). Empty in serve, where the future is unknown.
  std::function<double(TaskId t, TimePoint from, TimePoint to)> future_peak_qps;
};

}  // namespace sloserve

#pragma once
// Read-only views the engine hands to policies. Policies never hold them across calls.
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

// A worker as policies see it.
struct WorkerView {
  WorkerId id = 0;
  HardwareId hardware = 0;
  std::string name;
  bool busy = false;
  TimePoint busy_until{};  // expected completion of the running batch (if busy)
  VariantId last_variant = kNoId;
  size_t queue_length = 0;   // queries in the worker's local queue
  int64_t queued_rows = 0;   // sum of their sizes
  std::vector<bool> loaded;  // indexed by VariantId: resident without a cold start
  bool active = true;        // planning may retire a worker: it gets no new queries
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

// What every policy may read about the deployment it decides for.
struct PolicyContext {
  const ProfileSuite* suite = nullptr;
  std::vector<WorkerView> workers;  // initial state: ids, hardware, preloads
  uint64_t seed = 1;
  // The deployment's task and SLO (policies that plan offline for an SLO, e.g. RAMSIS;
  // queries still carry their own deadlines).
  TaskId task = 0;
  Duration slo{};
  // Runs offline work (e.g. generating a missing RAMSIS policy) off the decision path:
  // the simulator runs it at once (deterministic, no virtual time passes), the server on a
  // background thread. Work must publish its result thread-safely; empty = not available.
  std::function<void(std::function<void()>)> run_offline;
  // Reports progress of long work at Init (e.g. generating a RAMSIS policy set): what is
  // being done, steps done and the current estimate of the total. Empty = nobody listens.
  std::function<void(const std::string& what, int done, int total)> progress;
};

}  // namespace sloserve

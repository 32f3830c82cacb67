#pragma once
// Admission control (docs/admission.md): protects the SLO of the queries the engine
// accepts when more arrive than the deployment can serve. Rules, all priced with the
// profile's median batch latency (what the engine sends executors as RunBatch::expected):
//
//   1. Early rejection: a query is refused at Submit (`shed`, never `late`) when its
//      deadline cannot be met behind the rows queued ahead of it:
//        (queued + its rows) / capacity + batch time > target x (deadline - now),
//      and only then: one that would miss with none queued is no overload (its batch
//      decides, rule 3). A load-following selection's batch time is priced in proportion
//      to the query's time left when that is under the SLO (BatchTimeFor).
//   2. A bounded queue: at most `max_queued_rows` rows wait (default: what the
//      deployment clears in one SLO, capacity x SLO), whatever the deadlines say.
//   3. Expired work is dropped before it runs (`expired`): a queue's head whose deadline
//      is nearer than the fastest single-row latency, and a formed batch's queries due
//      before the batch's expected end.
//
// Capacity follows the policies' own choices: each worker's service rate is the rows
// per second of the batches its batching/selection policy forms (an exponential moving
// average of rows / expected duration), starting from the profile's best rows per second
// among batches no slower than half the SLO (a query waits for the batch in hand, then
// runs in its own). When the selection follows the load (RAMSIS, Jellyfish+), that
// profile best is also a floor under the average: at light load such a policy forms slow
// batches of an accurate variant, and when load steps up it switches to fast ones, so
// the light-load rate would shed the step (the demo's ramp lost 21% of its 1,600 qps
// step that way). The deployment's capacity sums its active workers' rates; the batch
// time averages their batches. Pure arithmetic: no clock, no threads.
//
// Priority classes (Triton's `priority`: 1 = highest, 0 = the default level): a query of
// level p of L may use (L - p + 1) / L of the queue bound and of the time it may wait
// (target x time to the deadline - batch time), so under overload the queue settles where the
// lowest classes are refused and the highest still get in (the room above a class's share is kept
// for the classes above it).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct AdmissionOptions {
  bool enabled = false;
  // Bound on the rows waiting (not running); 0 = capacity x SLO (at least 1).
  int64_t max_queued_rows = 0;
  // Share of a query's time to its deadline that its estimated wait and batch may take
  // (the estimate is a mean; under overload the queue sits at this threshold). (0, 1].
  double target = 0.75;
  // Priority levels (1..kMaxPriorityLevels) and the level of a query that names none.
  int32_t priority_levels = 2;
  int32_t default_priority = 1;
};

inline constexpr int32_t kMaxPriorityLevels = 16;
// The level a query's `priority` asks for: 0 = `default_level`; beyond the levels = the
// lowest (frontends refuse those with 400 before they get here).
inline int32_t PriorityLevel(int32_t priority, int32_t levels, int32_t default_level) {
  if (priority == 0) return default_level;
  return std::clamp(priority, 1, std::max(levels, 1));
}
// Whether the levels and the default are in range (the error names both).
Status ValidatePriorityLevels(int64_t levels, int64_t default_level);

class AdmissionControl {
 public:
  AdmissionControl() = default;
  AdmissionControl(const ProfileSuite& suite, TaskId task, Duration slo, AdmissionOptions options,
                   bool variant_follows_load = false);

  bool enabled() const { return options_.enabled; }
  int32_t priority_levels() const { return options_.priority_levels; }
  // The workers taking queries (id, hardware) changed.
  void SetActiveWorkers(const std::vector<std::pair<WorkerId, HardwareId>>& active);
  // Worker `w` started a batch of `rows` the profile expects to take `expected`.
  void OnBatch(WorkerId w, int32_t rows, Duration expected);
  // The level a query's `priority` asks for: 0 = the default; beyond the levels = the
  // lowest (frontends refuse those with 400 before they get here).
  int32_t Level(int32_t priority) const;
  // Whether a query of `rows` with `deadline` and priority `level` (resolved by Level)
  // may join `queued_rows` waiting rows.
  bool Admit(int64_t queued_rows, int32_t rows, TimePoint now, TimePoint deadline,
             int32_t level = 1) const;
  // The most rows a query with `left` to its deadline may have and still meet it with
  // nothing queued ahead (rule 1 judges such a query on its wait; a larger one is admitted
  // for its batch to decide). INT64_MAX when admission is off or has no capacity estimate.
  int64_t MaxRowsAlone(Duration left) const;
  // Whether a queued query can no longer meet its deadline even if it started now.
  bool Expired(TimePoint deadline, TimePoint now) const { return deadline < now + min_service_; }

  double capacity_rows_per_s() const { return capacity_; }
  int64_t max_queued_rows() const { return bound_; }
  Duration batch_time() const;

 private:
  struct Worker {
    bool active = false;
    HardwareId hardware = 0;
    double rate = 0;     // rows/s of its recent batches
    double batch_s = 0;  // their expected duration
  };
  void Recompute();
  // The batch a query with `left` until its deadline is priced with (Admit).
  Duration BatchTimeFor(Duration left) const;
  // The time of `left` its wait may take: target x left - its batch.
  double RoomSeconds(Duration left) const;

  AdmissionOptions options_;
  bool follows_load_ = false;
  Duration slo_{};
  std::vector<double> capacity_by_hw_;  // initial rows/s of one worker of each type
  std::vector<double> batch_by_hw_;     // and its batch's median latency (s)
  std::vector<Duration> min_by_hw_;     // fastest single-row median latency
  std::vector<Worker> workers_;
  double capacity_ = 0;   // over the active workers
  double batch_sum_ = 0;  // sum of their batch_s
  int active_ = 0;
  Duration min_service_{};  // the fastest single row among them
  int64_t bound_ = INT64_MAX / 2;
};

}  // namespace sloserve

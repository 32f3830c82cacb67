#include "sloserve/engine/admission.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace sloserve {
namespace {

// Weight of a new batch in a worker's rate: about the last 20 batches count.
constexpr double kRateWeight = 0.05;

}  // namespace

Status ValidatePriorityLevels(int64_t levels, int64_t default_level) {
  if (levels < 1 || levels > kMaxPriorityLevels) {
    return InvalidArgumentError("'engine.priority_levels': must be 1.." +
                                std::to_string(kMaxPriorityLevels) + ", got " +
                                std::to_string(levels));
  }
  if (default_level < 1 || default_level > levels) {
    return InvalidArgumentError("'engine.priority_default': must be 1.." + std::to_string(levels) +
                                " (engine.priority_levels), got " + std::to_string(default_level));
  }
  return OkStatus();
}

int32_t AdmissionControl::Level(int32_t priority) const {
  return PriorityLevel(priority, options_.priority_levels, options_.default_priority);
}

AdmissionControl::AdmissionControl(const ProfileSuite& suite, TaskId task, Duration slo,
                                   AdmissionOptions options, bool variant_follows_load)
    : options_(options), follows_load_(variant_follows_load), slo_(slo) {
  const size_t types = suite.hardware().size();
  capacity_by_hw_.assign(types, 0.0);
  batch_by_hw_.assign(types, 0.0);
  min_by_hw_.assign(types, Duration(0));
  if (task >= suite.tasks().size()) return;
  for (HardwareId h = 0; h < types; ++h) {
    double best = 0, best_s = 0, fallback = 0, fallback_s = 0;
    Duration fastest = Duration(0);
    for (VariantId v : suite.VariantsOfTask(task)) {
      for (int b : suite.BatchSizes(h, v)) {
        const LatencyDistribution* d = suite.Latency(h, v, b);
        if (d == nullptr || d->empty()) continue;
        const Duration t = std::max(d->Quantile(0.5), Duration(1));
        const double rate = b / ToSeconds(t);
        if (fastest == Duration(0) || t < fastest) fastest = t;
        if (t * 2 <= slo && rate > best) {
          best = rate;
          best_s = ToSeconds(t);
        }
        if (fallback == 0 || ToSeconds(t) < fallback_s) {  // no batch fits: the quickest
          fallback = rate;
          fallback_s = ToSeconds(t);
        }
      }
    }
    if (best == 0) {
      best = fallback;
      best_s = fallback_s;
    }
    capacity_by_hw_[h] = best;
    batch_by_hw_[h] = best_s;
    min_by_hw_[h] = fastest;
  }
}

void AdmissionControl::SetActiveWorkers(
    const std::vector<std::pair<WorkerId, HardwareId>>& active) {
  for (Worker& w : workers_) w.active = false;
  for (auto [id, h] : active) {
    if (workers_.size() <= id) workers_.resize(id + 1);
    Worker& w = workers_[id];
    if (w.rate == 0 && h < capacity_by_hw_.size()) {  // new: the profile's estimate
      w.rate = capacity_by_hw_[h];
      w.batch_s = batch_by_hw_[h];
    }
    w.hardware = h;
    w.active = true;
  }
  min_service_ = Duration(0);
  for (auto [id, h] : active) {
    if (h >= min_by_hw_.size() || min_by_hw_[h] == Duration(0)) continue;
    if (min_service_ == Duration(0) || min_by_hw_[h] < min_service_) min_service_ = min_by_hw_[h];
  }
  Recompute();
}

void AdmissionControl::OnBatch(WorkerId id, int32_t rows, Duration expected) {
  if (!options_.enabled || id >= workers_.size() || rows <= 0 || expected <= Duration(0)) return;
  Worker& w = workers_[id];
  const double rate = rows / ToSeconds(expected);
  w.rate = w.rate > 0 ? w.rate + kRateWeight * (rate - w.rate) : rate;
  w.batch_s = w.batch_s > 0 ? w.batch_s + kRateWeight * (ToSeconds(expected) - w.batch_s)
                            : ToSeconds(expected);
  if (w.active) Recompute();
}

void AdmissionControl::Recompute() {
  capacity_ = 0;
  batch_sum_ = 0;
  active_ = 0;
  for (const Worker& w : workers_) {
    if (!w.active) continue;
    const bool floored = follows_load_ && w.hardware < capacity_by_hw_.size() &&
                         w.rate < capacity_by_hw_[w.hardware];
    capacity_ += floored ? capacity_by_hw_[w.hardware] : w.rate;
    batch_sum_ += floored ? batch_by_hw_[w.hardware] : w.batch_s;
    ++active_;
  }
  if (options_.max_queued_rows > 0) {
    bound_ = options_.max_queued_rows;
  } else if (capacity_ > 0) {
    bound_ = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(capacity_ * ToSeconds(slo_))));
  } else {
    bound_ = INT64_MAX / 2;  // nothing profiled to size it from: the engine's own bounds
  }
}

Duration AdmissionControl::batch_time() const {
  return active_ > 0 ? SecondsF(batch_sum_ / active_) : Duration(0);
}

bool AdmissionControl::Admit(int64_t queued_rows, int32_t rows, TimePoint now, TimePoint deadline,
                             int32_t level) const {
  if (!options_.enabled) return true;
  // A lower class may use only its share of the queue and of the time to its deadline.
  const int32_t levels = std::max(options_.priority_levels, 1);
  const double share =
      static_cast<double>(levels - std::clamp(level, 1, levels) + 1) / static_cast<double>(levels);
  const int64_t bound =
      share < 1 ? static_cast<int64_t>(std::ceil(static_cast<double>(bound_) * share)) : bound_;
  if (queued_rows + rows > bound) return false;
  if (capacity_ <= 0) return true;  // nothing profiled to estimate with: the bound only
  // Rule 1 sheds for the wait behind the queued rows. A query that would miss with none
  // ahead of it (its own SLO is tighter than the batches it is priced with) is not turned
  // away as overload, which a retry cannot cure: it is admitted, and the batch formed for
  // it decides (rule 3: the variant chosen then, and a drop if even that is too slow).
  const Duration left = deadline - now;
  if (rows > MaxRowsAlone(left)) return true;
  const double wait_s = static_cast<double>(queued_rows + rows) / capacity_;
  return wait_s <= RoomSeconds(left) * share;
}

// The estimate is a mean: a query admitted right at its deadline misses it half the time,
// so only `target` of the time left may be spent: its batch, then the wait, of which a
// lower class gets its share (an idle deployment still takes every class).
double AdmissionControl::RoomSeconds(Duration left) const {
  return ToSeconds(left) * options_.target - ToSeconds(BatchTimeFor(left));
}

int64_t AdmissionControl::MaxRowsAlone(Duration left) const {
  if (!options_.enabled || capacity_ <= 0) return INT64_MAX;
  const double rows = std::floor(RoomSeconds(left) * capacity_);
  if (rows < 0) return -1;
  return rows >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(rows);
}

Duration AdmissionControl::BatchTimeFor(Duration left) const {
  const Duration mean = batch_time();
  // A selection that follows the load serves a query with less time than the SLO from a
  // faster variant (as it does when load grows): its batch is priced in proportion, down
  // to the fastest single row. Any other selection runs the batches it has been running.
  if (!follows_load_ || slo_ <= Duration(0) || left >= slo_ || left <= Duration(0)) return mean;
  const Duration scaled = SecondsF(ToSeconds(mean) * ToSeconds(left) / ToSeconds(slo_));
  return std::min(mean, std::max(scaled, min_service_));
}

}  // namespace sloserve

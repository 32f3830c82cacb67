#include "sloserve/policy/selection/row_capacity.h"

#include <algorithm>

#include "sloserve/profile/profile.h"

namespace sloserve {

RowCapacity::RowCapacity(const ProfileSuite* suite) : suite_(suite) {
  const size_t variants = suite->variants().size();
  points_.resize(suite->hardware().size() * variants);
  for (const auto& [hw, v] : suite->ProfiledPairs()) {
    auto& points = points_[hw * variants + v];
    for (int b : suite->BatchSizes(hw, v)) {
      if (const LatencyDistribution* d = suite->Latency(hw, v, b))
        points.emplace_back(b, d->Quantile(kQuantile));
    }
  }
}

int RowCapacity::RowsWithin(HardwareId hw, VariantId v, Duration slo) const {
  if (suite_ == nullptr || v >= suite_->variants().size()) return 0;
  const size_t at = hw * suite_->variants().size() + v;
  if (at >= points_.size()) return 0;
  int rows = 0;
  // Not monotone in every profile (a noisy batch size may be slower than a larger one).
  for (const auto& [b, p95] : points_[at]) {
    if (p95 <= slo) rows = b;
  }
  return rows;
}

int RowCapacity::MaxRows(std::span<const HardwareId> hardware, TaskId task, Duration slo) const {
  if (suite_ == nullptr) return 0;
  int rows = 0;
  for (HardwareId hw : hardware) {
    for (VariantId v : suite_->VariantsOfTask(task)) {
      if (suite_->BatchSizes(hw, v).empty()) continue;
      rows = std::max({rows, 1, RowsWithin(hw, v, slo)});
    }
  }
  return rows;
}

SelectionDecision RowCapacity::Fit(HardwareId hw, TaskId task, Duration slo, int rows,
                                   SelectionDecision chosen) const {
  if (chosen.variant == kNoId || rows <= 1) return chosen;
  if (RowsWithin(hw, chosen.variant, slo) >= rows)
    return {chosen.variant, std::max(chosen.max_rows, rows)};
  VariantId best = kNoId;
  for (VariantId v : suite_->VariantsOfTask(task)) {
    if (RowsWithin(hw, v, slo) < rows) continue;
    if (best == kNoId || suite_->variants()[v].accuracy > suite_->variants()[best].accuracy)
      best = v;
  }
  if (best != kNoId) return {best, rows};
  // None finishes them in time: the selection's batch if it holds them (late rather than
  // never; serve refuses such requests before they queue), else none.
  return rows <= chosen.max_rows ? chosen : SelectionDecision{kNoId, 0};
}

}  // namespace sloserve

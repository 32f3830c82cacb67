#include "sloserve/policy/batching/point_estimate.h"

namespace sloserve {

Duration BatchLatencyEstimate::Estimate(HardwareId hw, VariantId v, int rows) {
  if (!suite_ || rows <= 0) return Duration(0);
  auto key = std::make_pair(hw, v);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    std::vector<Duration> table;
    const int max_rows = suite_->MaxBatch(hw, v);
    table.resize(static_cast<size_t>(std::max(max_rows, 0)) + 1, Duration(0));
    for (int r = 1; r <= max_rows; ++r) {
      const LatencyDistribution* d = suite_->ServiceLatency(hw, v, r);
      if (d && !d->empty()) table[static_cast<size_t>(r)] = d->Quantile(quantile_);
    }
    it = cache_.emplace(key, std::move(table)).first;
  }
  const std::vector<Duration>& t = it->second;
  if (t.size() <= 1) return Duration(0);
  const int max_rows = static_cast<int>(t.size()) - 1;
  if (rows <= max_rows) return t[static_cast<size_t>(rows)];
  return Duration(t.back().count() * rows / max_rows);
}

std::optional<SelectionDecision> SelectForHead(SelectionPolicy& selection, const WorkerView& worker,
                                               const QueueView& queue, TimePoint now,
                                               BatchDecision* out) {
  SelectionDecision sel = selection.Choose(worker, queue, queue.front(), now);
  if (sel.variant == kNoId || sel.max_rows <= 0) {
    out->reject.push_back(0);
    return std::nullopt;
  }
  return sel;
}

}  // namespace sloserve

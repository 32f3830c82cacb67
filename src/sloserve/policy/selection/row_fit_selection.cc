#include "sloserve/policy/selection/row_fit_selection.h"

#include <algorithm>

namespace sloserve {

Status RowFitSelection::Init(const PolicyContext& ctx) {
  capacity_ = RowCapacity(ctx.suite);
  return inner_->Init(ctx);
}

SelectionDecision RowFitSelection::Choose(const WorkerView& worker, const QueueView& queue,
                                          const Query& head, TimePoint now) {
  SelectionDecision chosen = inner_->Choose(worker, queue, head, now);
  // A plan pinned the worker to a variant (InfAdapter, composed): the batch runs that
  // variant whatever the selection chose, so the batching policy must size it for that
  // one (ORLOJ's latency tables, EDF's fit) — its largest batch within the head's SLO,
  // at least one row (late rather than never).
  if (worker.pinned != kNoId && chosen.variant != worker.pinned) {
    chosen.variant = worker.pinned;
    chosen.max_rows = std::max(1, capacity_.RowsWithin(worker.hardware, worker.pinned, head.slo()));
  }
  if (head.size <= 1 || worker.pinned != kNoId) return chosen;  // one row: the common case
  return capacity_.Fit(worker.hardware, head.task, head.slo(), head.size, chosen);
}

}  // namespace sloserve

#include "sloserve/policy/selection/row_fit_selection.h"

namespace sloserve {

Status RowFitSelection::Init(const PolicyContext& ctx) {
  capacity_ = RowCapacity(ctx.suite);
  return inner_->Init(ctx);
}

SelectionDecision RowFitSelection::Choose(const WorkerView& worker, const QueueView& queue,
                                          const Query& head, TimePoint now) {
  const SelectionDecision chosen = inner_->Choose(worker, queue, head, now);
  if (head.size <= 1) return chosen;  // the common case
  return capacity_.Fit(worker.hardware, head.task, head.slo(), head.size, chosen);
}

}  // namespace sloserve

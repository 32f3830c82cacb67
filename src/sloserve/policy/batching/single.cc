#include "sloserve/policy/batching/single.h"

namespace sloserve {

StatusOr<std::unique_ptr<BatchingPolicy>> SingleBatching::Create(
    const PolicyParams& params, std::unique_ptr<SelectionPolicy> sel) {
  (void)params;
  if (!sel) return InvalidArgumentError("single batching needs a selection policy");
  return std::unique_ptr<BatchingPolicy>(new SingleBatching(std::move(sel)));
}

void SingleBatching::NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                               BatchDecision* out) {
  out->Clear();
  if (queue.empty()) return;
  size_t head = 0;
  if (!queue.arrival_ordered()) {
    for (size_t i = 1; i < queue.size(); ++i) {
      const Query& a = queue.at(i);
      const Query& b = queue.at(head);
      if (a.arrival < b.arrival || (a.arrival == b.arrival && a.id < b.id)) head = i;
    }
  }
  const Query& q = queue.at(head);
  const SelectionDecision sel = selection_->Choose(worker, queue, q, now);
  if (sel.variant == kNoId || sel.max_rows <= 0 || q.size > sel.max_rows) {
    out->reject.push_back(static_cast<uint32_t>(head));
    return;
  }
  out->kind = BatchDecision::Kind::kRun;
  out->variant = sel.variant;
  out->take.push_back(static_cast<uint32_t>(head));
}

}  // namespace sloserve

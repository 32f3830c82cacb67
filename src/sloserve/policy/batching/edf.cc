#include "sloserve/policy/batching/edf.h"

#include <algorithm>

namespace sloserve {
namespace edf_options {
const KeyDecl kDropExpired{.name = "drop_expired",
                           .type = KeyType::kBool,
                           .default_value = "false",
                           .help =
                               "drop queries already past their deadline instead of serving "
                               "them late"};
}  // namespace edf_options

StatusOr<std::unique_ptr<BatchingPolicy>> EdfBatching::Create(const PolicyParams& params,
                                                              std::unique_ptr<SelectionPolicy> sel,
                                                              bool fifo) {
  Options o;
  ASSIGN_OR_RETURN(o.drop_expired, params.GetBool(edf_options::kDropExpired));
  o.arrival_order = fifo;
  if (!sel) return InvalidArgumentError("edf/fifo batching needs a selection policy");
  return std::unique_ptr<BatchingPolicy>(new EdfBatching(o, std::move(sel)));
}

void EdfBatching::NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                            BatchDecision* out) {
  out->Clear();
  // Deadline order puts every expired query at the front of the queue.
  size_t first = 0;
  if (options_.drop_expired) {
    while (first < queue.size() && queue.at(first).deadline < now) {
      out->drop.push_back(static_cast<uint32_t>(first++));
    }
  }
  if (first == queue.size()) return;

  // Service order: the queue itself (EDF, or FIFO when deadline order is arrival order),
  // else the remaining positions sorted by arrival.
  const bool fifo_scan = options_.arrival_order && !queue.arrival_ordered();
  if (fifo_scan) {
    scratch_.clear();
    for (size_t i = first; i < queue.size(); ++i) scratch_.push_back(static_cast<uint32_t>(i));
    std::sort(scratch_.begin(), scratch_.end(), [&](uint32_t a, uint32_t b) {
      const Query& qa = queue.at(a);
      const Query& qb = queue.at(b);
      return qa.arrival != qb.arrival ? qa.arrival < qb.arrival : qa.id < qb.id;
    });
  }
  const size_t n = queue.size() - first;
  auto position = [&](size_t k) -> uint32_t {
    return fifo_scan ? scratch_[k] : static_cast<uint32_t>(first + k);
  };

  const Query& head = queue.at(position(0));
  SelectionDecision sel = selection_->Choose(worker, queue, head, now);
  if (sel.variant == kNoId || sel.max_rows <= 0) {
    out->reject.push_back(position(0));  // nothing here serves this task: report it
    return;
  }
  out->variant = sel.variant;
  int rows = 0;
  for (size_t k = 0; k < n; ++k) {
    const uint32_t i = position(k);
    const Query& q = queue.at(i);
    if (q.task != head.task) continue;
    // More rows than this batch holds: it gets a batch of its own when it is the head
    // (RowFitSelection fits the head's batch to its rows); a head the decision still
    // does not hold, nothing here can serve.
    if (q.size > sel.max_rows) {
      if (k == 0) out->reject.push_back(i);
      continue;
    }
    if (rows + q.size > sel.max_rows) break;
    rows += q.size;
    out->take.push_back(i);
    if (rows == sel.max_rows) break;
  }
  std::sort(out->take.begin(), out->take.end());
  std::sort(out->reject.begin(), out->reject.end());
  if (!out->take.empty()) out->kind = BatchDecision::Kind::kRun;
}

}  // namespace sloserve

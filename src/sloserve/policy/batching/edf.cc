#include "sloserve/policy/batching/edf.h"

#include <algorithm>

namespace sloserve {

StatusOr<std::unique_ptr<BatchingPolicy>> EdfBatching::Create(
    const PolicyParams& params, std::unique_ptr<SelectionPolicy> sel, bool fifo) {
  Options o;
  ASSIGN_OR_RETURN(o.drop_expired, params.GetBool("drop_expired", false));
  o.arrival_order = fifo;
  if (!sel) return InvalidArgumentError("edf/fifo batching needs a selection policy");
  return std::unique_ptr<BatchingPolicy>(new EdfBatching(o, std::move(sel)));
}

void EdfBatching::NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                            BatchDecision* out) {
  out->Clear();
  // The queue is in deadline order; expired queries sit at its front.
  size_t first = 0;
  if (options_.drop_expired) {
    for (size_t i = 0; i < queue.size(); ++i) {
      if (queue.at(i).deadline < now) out->drop.push_back(static_cast<uint32_t>(i));
    }
    while (first < queue.size() && queue.at(first).deadline < now) ++first;
  }
  if (out->drop.size() == queue.size()) return;

  const Query* head = nullptr;
  // When deadline order is arrival order, FIFO is EDF: take the cheap path.
  const bool fifo_scan = options_.arrival_order && !queue.arrival_ordered();
  if (fifo_scan) {
    for (size_t i = 0; i < queue.size(); ++i) {
      const Query& q = queue.at(i);
      if (options_.drop_expired && q.deadline < now) continue;
      if (!head || q.arrival < head->arrival || (q.arrival == head->arrival && q.id < head->id)) head = &q;
    }
  } else {
    for (size_t i = first; i < queue.size() && !head; ++i) {
      if (!(options_.drop_expired && queue.at(i).deadline < now)) head = &queue.at(i);
    }
  }
  if (!head) return;

  SelectionDecision sel = selection_->Choose(worker, queue, *head, now);
  if (sel.variant == kNoId || sel.max_rows <= 0) {
    // Nothing can serve this task here: drop the head so it is reported, not stuck.
    for (size_t i = 0; i < queue.size(); ++i) {
      if (&queue.at(i) == head) {
        out->drop.push_back(static_cast<uint32_t>(i));
        std::sort(out->drop.begin(), out->drop.end());
        out->drop.erase(std::unique(out->drop.begin(), out->drop.end()), out->drop.end());
        break;
      }
    }
    return;
  }
  out->variant = sel.variant;
  if (fifo_scan) {
    CollectInArrivalOrder(queue, *head, sel.max_rows, out);
  } else {
    int rows = 0;
    for (size_t i = first; i < queue.size(); ++i) {
      const Query& q = queue.at(i);
      if (q.task != head->task) continue;
      if (options_.drop_expired && q.deadline < now) continue;
      if (rows + q.size > sel.max_rows) {
        if (rows == 0) continue;  // a query larger than any batch: skipped here
        break;
      }
      rows += q.size;
      out->take.push_back(static_cast<uint32_t>(i));
      if (rows == sel.max_rows) break;
    }
  }
  if (out->take.empty()) {
    // The head alone exceeds the largest profiled batch: it can never run.
    for (size_t i = 0; i < queue.size(); ++i) {
      if (&queue.at(i) == head) out->drop.push_back(static_cast<uint32_t>(i));
    }
    std::sort(out->drop.begin(), out->drop.end());
    out->drop.erase(std::unique(out->drop.begin(), out->drop.end()), out->drop.end());
    return;
  }
  out->kind = BatchDecision::Kind::kRun;
}

void EdfBatching::CollectInArrivalOrder(const QueueView& queue, const Query& head, int max_rows,
                                        BatchDecision* out) {
  scratch_.clear();
  for (size_t i = 0; i < queue.size(); ++i) {
    const Query& q = queue.at(i);
    if (q.task != head.task) continue;
    if (std::binary_search(out->drop.begin(), out->drop.end(), static_cast<uint32_t>(i))) continue;
    scratch_.push_back(static_cast<uint32_t>(i));
  }
  std::sort(scratch_.begin(), scratch_.end(), [&](uint32_t a, uint32_t b) {
    const Query& qa = queue.at(a);
    const Query& qb = queue.at(b);
    return qa.arrival != qb.arrival ? qa.arrival < qb.arrival : qa.id < qb.id;
  });
  int rows = 0;
  for (uint32_t i : scratch_) {
    const Query& q = queue.at(i);
    if (rows + q.size > max_rows) break;
    rows += q.size;
    out->take.push_back(i);
  }
  std::sort(out->take.begin(), out->take.end());
}

}  // namespace sloserve

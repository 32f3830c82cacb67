#include "sloserve/policy/batching/clockwork.h"

#include "sloserve/policy/batching/point_estimate.h"

#include <algorithm>

namespace sloserve {
namespace clockwork_options {
const KeyDecl kLatencyQuantile{
    .name = "latency_quantile",
    .type = KeyType::kNumber,
    .default_value = "0.99",
    .min = 0,
    .max = 1,
    .help = "quantile of the profile's latency samples used as the point estimate"};
}  // namespace clockwork_options

StatusOr<std::unique_ptr<BatchingPolicy>> ClockworkBatching::Create(
    const PolicyParams& params, std::unique_ptr<SelectionPolicy> sel) {
  Options o;
  ASSIGN_OR_RETURN(o.latency_quantile, params.GetDouble(clockwork_options::kLatencyQuantile));
  if (!sel) return InvalidArgumentError("clockwork batching needs a selection policy");
  return std::unique_ptr<BatchingPolicy>(new ClockworkBatching(o, std::move(sel)));
}

Status ClockworkBatching::Init(const PolicyContext& ctx) {
  est_ = BatchLatencyEstimate(ctx.suite, options_.latency_quantile);
  return selection_->Init(ctx);
}

void ClockworkBatching::NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                                  BatchDecision* out) {
  out->Clear();
  if (queue.empty()) return;
  const Query& head = queue.front();
  std::optional<SelectionDecision> chosen = SelectForHead(*selection_, worker, queue, now, out);
  if (!chosen) return;
  const SelectionDecision sel = *chosen;
  const Duration one = est_.Estimate(worker.hardware, sel.variant, 1);
  cand_.clear();
  int rows = 0;
  for (size_t i = 0; i < queue.size() && rows < sel.max_rows; ++i) {
    const Query& q = queue.at(i);
    if (q.task != head.task) continue;
    if (q.size > sel.max_rows) {             // batched on its own as the head (RowFitSelection)
      if (i == 0) out->reject.push_back(0);  // the head it does not hold: unservable here
    } else if (now + one > q.deadline) {
      out->drop.push_back(static_cast<uint32_t>(i));  // predicted to miss: reject early
    } else if (rows + q.size <= sel.max_rows) {
      rows += q.size;
      cand_.push_back(static_cast<uint32_t>(i));
    } else {
      break;
    }
  }
  if (!cand_.empty()) {
    // The largest prefix whose predicted completion meets its earliest deadline.
    const TimePoint earliest = queue.at(cand_.front()).deadline;
    size_t k = cand_.size();
    int krows = rows;
    while (k > 1 && now + est_.Estimate(worker.hardware, sel.variant, krows) > earliest) {
      --k;
      krows -= queue.at(cand_[k]).size;
    }
    out->take.assign(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(k));
    out->variant = sel.variant;
    out->kind = BatchDecision::Kind::kRun;
  }
  std::sort(out->drop.begin(), out->drop.end());
  std::sort(out->reject.begin(), out->reject.end());
}

}  // namespace sloserve

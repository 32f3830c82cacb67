#include "sloserve/policy/batching/nexus.h"

#include "sloserve/policy/batching/point_estimate.h"

#include <algorithm>

namespace sloserve {

StatusOr<std::unique_ptr<BatchingPolicy>> NexusBatching::Create(
    const PolicyParams& params, std::unique_ptr<SelectionPolicy> sel) {
  Options o;
  ASSIGN_OR_RETURN(o.latency_quantile, params.GetDouble("latency_quantile", 0.5));
  if (!(o.latency_quantile >= 0 && o.latency_quantile <= 1))
    return InvalidArgumentError("nexus: option 'latency_quantile' must be in [0, 1]");
  ASSIGN_OR_RETURN(double epoch_ms, params.GetDouble("epoch_ms", 1000));
  if (!(epoch_ms >= 1 && epoch_ms <= 3.6e6))
    return InvalidArgumentError("nexus: option 'epoch_ms' must be in [1, 3600000]");
  o.epoch = MillisF(epoch_ms);
  ASSIGN_OR_RETURN(o.rate_qps, params.GetDouble("rate_qps", 0));
  if (!(o.rate_qps >= 0)) return InvalidArgumentError("nexus: option 'rate_qps' must be >= 0");
  if (!sel) return InvalidArgumentError("nexus batching needs a selection policy");
  return std::unique_ptr<BatchingPolicy>(new NexusBatching(o, std::move(sel)));
}

Status NexusBatching::Init(const PolicyContext& ctx) {
  est_ = BatchLatencyEstimate(ctx.suite, options_.latency_quantile);
  workers_ = std::max<size_t>(ctx.workers.size(), 1);
  rate_qps_ = options_.rate_qps;
  return selection_->Init(ctx);
}

void NexusBatching::OnArrival(const Query& q, TimePoint now) {
  selection_->OnArrival(q, now);
  if (options_.rate_qps > 0) return;
  while (now >= epoch_start_ + options_.epoch) {  // close the epoch: re-plan
    rate_qps_ = static_cast<double>(epoch_arrivals_) / ToSeconds(options_.epoch);
    epoch_arrivals_ = 0;
    epoch_start_ += options_.epoch;
    if (now >= epoch_start_ + options_.epoch) {  // a long gap: skip empty epochs
      rate_qps_ = 0;
      epoch_start_ = now;
    }
  }
  ++epoch_arrivals_;
}

int NexusBatching::PlannedBatch(HardwareId hw, VariantId v, int max_rows, Duration slo) {
  const double per_worker = rate_qps_ / static_cast<double>(workers_);
  int best = 1;
  for (int b = 1; b <= max_rows; ++b) {
    const Duration e = est_.Estimate(hw, v, b);
    Duration cycle = e;
    if (per_worker > 0) cycle = std::max(e, SecondsF(b / per_worker));
    if (e + cycle <= slo) best = b;
  }
  return best;
}

void NexusBatching::NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                              BatchDecision* out) {
  out->Clear();
  if (queue.empty()) return;
  const Query& head = queue.front();
  std::optional<SelectionDecision> chosen = SelectForHead(*selection_, worker, queue, now, out);
  if (!chosen) return;
  const SelectionDecision sel = *chosen;
  // At least the head's rows: a multi-row request is never split.
  const int b =
      std::max(head.size, PlannedBatch(worker.hardware, sel.variant, sel.max_rows, head.slo()));
  const Duration e = est_.Estimate(worker.hardware, sel.variant, b);
  int rows = 0;
  for (size_t i = 0; i < queue.size() && rows < b; ++i) {
    const Query& q = queue.at(i);
    if (q.task != head.task) continue;
    if (q.size > sel.max_rows) {             // batched on its own as the head (RowFitSelection)
      if (i == 0) out->reject.push_back(0);  // the head it does not hold: unservable here
    } else if (now + e > q.deadline) {
      out->drop.push_back(static_cast<uint32_t>(i));  // early drop
    } else if (rows + q.size <= b) {
      rows += q.size;
      out->take.push_back(static_cast<uint32_t>(i));
    } else {
      break;
    }
  }
  if (!out->take.empty()) {
    out->variant = sel.variant;
    out->kind = BatchDecision::Kind::kRun;
  }
}

}  // namespace sloserve

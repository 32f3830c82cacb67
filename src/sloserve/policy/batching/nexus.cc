#include "sloserve/policy/batching/nexus.h"

#include "sloserve/policy/batching/point_estimate.h"

#include <algorithm>

namespace sloserve {
namespace nexus_options {
const KeyDecl kLatencyQuantile{.name = "latency_quantile",
                               .type = KeyType::kNumber,
                               .default_value = "0.5",
                               .min = 0,
                               .max = 1,
                               .help = "quantile of the profile's latency samples planned on"};
const KeyDecl kEpochMs{.name = "epoch_ms",
                       .type = KeyType::kNumber,
                       .default_value = "1000",
                       .unit = "ms",
                       .min = 1,
                       .max = 3.6e6,
                       .help = "re-planning interval (the rate window)"};
const KeyDecl kRateQps{.name = "rate_qps",
                       .type = KeyType::kNumber,
                       .default_value = "0",
                       .unit = "qps",
                       .min = 0,
                       .help = "fixed system rate instead of the observed one (0 = observe)"};
}  // namespace nexus_options

StatusOr<std::unique_ptr<BatchingPolicy>> NexusBatching::Create(
    const PolicyParams& params, std::unique_ptr<SelectionPolicy> sel) {
  Options o;
  ASSIGN_OR_RETURN(o.latency_quantile, params.GetDouble(nexus_options::kLatencyQuantile));
  ASSIGN_OR_RETURN(double epoch_ms, params.GetDouble(nexus_options::kEpochMs));
  o.epoch = MillisF(epoch_ms);
  ASSIGN_OR_RETURN(o.rate_qps, params.GetDouble(nexus_options::kRateQps));
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

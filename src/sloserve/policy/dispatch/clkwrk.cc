#include "sloserve/policy/dispatch/clkwrk.h"

#include <algorithm>
#include <limits>

#include "sloserve/policy/common_options.h"
#include "sloserve/policy/per_worker.h"

namespace sloserve {

StatusOr<std::unique_ptr<DispatchPolicy>> ClkwrkDispatch::Create(const PolicyParams& p) {
  Options o;
  ASSIGN_OR_RETURN(o.qos_factor, ParseQosFactor(p));
  ASSIGN_OR_RETURN(o.variant, p.GetString(kVariantOption));
  ASSIGN_OR_RETURN(o.predictor, LatencyPredictor::ParseOptions(p));
  return std::unique_ptr<DispatchPolicy>(new ClkwrkDispatch(std::move(o)));
}

Status ClkwrkDispatch::Init(const PolicyContext& ctx) {
  RETURN_IF_ERROR(deployment_.Init(ctx, options_.variant).WithPrefix("clkwrk: "));
  RETURN_IF_ERROR(predictor_.Init(*ctx.suite, ctx.seed));
  lanes_.assign(ctx.workers.size(), Lane());  // grows as workers are added
  return OkStatus();
}

void ClkwrkDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                            TimePoint now, std::vector<Assignment>* out) {
  deployment_.Observe(workers);  // a plan may have added a hardware type
  // Sync each lane with the engine: queries that left the local queue have started. A
  // worker seen for the first time (added by a plan) gets a fresh lane here, so the
  // lookups below stay in range.
  for (const WorkerView& w : workers) {
    Lane& l = PerWorker(lanes_, w.id);
    if (l.observing && w.busy_until != l.prev_busy_until) {
      predictor_.Observe(w.hardware, l.variant, l.rows, w.busy_until - l.started);
      l.observing = false;
    }
    while (l.queued.size() > w.queue_length) {
      l.queued_sum -= l.queued.front();
      l.queued.pop_front();
    }
  }
  const bool uniform = deployment_.eligibility.uniform();
  for (size_t i = 0; i < pending.size(); ++i) {
    const Query& q = pending.at(i);
    const TimePoint deadline_ok =
        q.arrival +
        Duration(static_cast<int64_t>(options_.qos_factor * static_cast<double>(q.slo().count())));
    size_t best_ok = workers.size(), best_any = workers.size();
    TimePoint finish_ok = kTimeInfinite, finish_any = kTimeInfinite;
    Duration pred_ok{0}, pred_any{0};
    for (size_t j = 0; j < workers.size(); ++j) {
      const WorkerView& w = workers[j];
      if (!w.active || w.hardware >= deployment_.coefficient.size() ||
          deployment_.coefficient[w.hardware] <= 0) {
        continue;
      }
      const VariantId v =
          uniform ? deployment_.variant : deployment_.VariantFor(q.task, w.hardware);
      if (!uniform && (v == kNoId || !deployment_.eligibility.Serves(w, q.task))) continue;
      const Lane& l = lanes_[w.id];
      TimePoint free = w.busy ? std::max(now, w.busy_until) : now;
      free += l.queued_sum;
      const Duration pred = predictor_.PredictNoisy(w.hardware, v, q.size);
      const TimePoint finish = free + pred;
      if (finish < finish_any) {
        finish_any = finish;
        best_any = j;
        pred_any = pred;
      }
      if (finish <= deadline_ok && finish < finish_ok) {
        finish_ok = finish;
        best_ok = j;
        pred_ok = pred;
      }
    }
    const size_t j = best_ok < workers.size() ? best_ok : best_any;
    if (j >= workers.size()) {  // no usable worker
      if (uniform) return;
      continue;
    }
    const Duration pred = best_ok < workers.size() ? pred_ok : pred_any;
    const WorkerView& w = workers[j];
    Lane& l = lanes_[w.id];
    out->push_back({static_cast<uint32_t>(i), w.id});
    const bool starts_now = !w.busy && w.queue_length == 0 && l.queued.empty();
    if (starts_now && options_.predictor.online) {
      // Starts at once (the engine launches it right after this call).
      l.observing = true;
      l.started = now;
      l.prev_busy_until = w.busy_until;
      l.rows = q.size;
      l.variant = uniform ? deployment_.variant : deployment_.VariantFor(q.task, w.hardware);
    }
    l.queued.push_back(pred);
    l.queued_sum += pred;
  }
}

}  // namespace sloserve

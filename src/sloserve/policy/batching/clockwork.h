#pragma once
// Clockwork-style batching (Gujarati et al., "Serving DNNs like Clockwork", OSDI'20,
// sections 4-5, as characterised by ORLOJ section 2.3): plan ahead on a *point estimate*
// of batch latency and reject what it predicts will miss.
//   * every queued query of the head's task for which even a batch of one is predicted
//     to finish after its deadline (now + est(1) > deadline) is dropped (reason
//     `policy`), as Clockwork's controller rejects requests it cannot schedule in time;
//   * of the rest (earliest deadline first), it runs the largest batch k whose predicted
//     completion now + est(k) meets the earliest deadline in it.
// est is the `latency_quantile` of the profile's latency at k rows (point_estimate.h):
// for dynamic models, the latency of average-length requests, so batches holding a long
// request overrun (the misprediction ORLOJ describes). Simplification: no action windows
// and no cancellation of the next batch; the engine forms a batch when a worker is idle.
// Options: latency_quantile (default 0.99). Selection (variant, max_batch) as edf.
#include <memory>

#include "sloserve/policy/batching/point_estimate.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class ClockworkBatching : public BatchingPolicy {
 public:
  struct Options {
    double latency_quantile = 0.99;
  };
  static StatusOr<std::unique_ptr<BatchingPolicy>> Create(const PolicyParams& params,
                                                          std::unique_ptr<SelectionPolicy> sel);
  ClockworkBatching(Options o, std::unique_ptr<SelectionPolicy> sel)
      : options_(o), selection_(std::move(sel)) {}
  Status Init(const PolicyContext& ctx) override;
  void NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                 BatchDecision* out) override;
  void OnArrival(const Query& q, TimePoint now) override { selection_->OnArrival(q, now); }
  void OnWorkersChanged(const std::vector<WorkerView>& workers) override {
    selection_->OnWorkersChanged(workers);
  }

 private:
  Options options_;
  std::unique_ptr<SelectionPolicy> selection_;
  BatchLatencyEstimate est_;
  std::vector<uint32_t> cand_;
};

}  // namespace sloserve

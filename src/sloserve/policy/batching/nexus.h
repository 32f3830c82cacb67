#pragma once
// Nexus-style batching (Shen et al., "Nexus: a GPU cluster engine for accelerating
// DNN-based video analysis", SOSP'19, section 6: squishy bin packing and early drop), as
// characterised by ORLOJ section 2.3: the batch size is precomputed from the *mean*
// latency profile and the request rate, not adapted to the requests at hand.
//   * every `epoch_ms`, the per-worker rate r is re-estimated from the arrivals of the
//     last epoch (or fixed by `rate_qps`), and the batch size b* is the largest b whose
//     duty cycle fits the SLO: est(b) + max(est(b), b / r) <= SLO (a request may wait a
//     whole duty cycle, then runs; with r unknown, 2 est(b) <= SLO);
//   * early drop: queued queries of the head's task that would miss their deadline in a
//     batch of b* (now + est(b*) > deadline) are dropped (reason `policy`);
//   * the next b* queries in deadline order run.
// est: `latency_quantile` (default 0.5) of the profile's latency (point_estimate.h).
// Options: latency_quantile, epoch_ms (1000), rate_qps (0 = observed).
#include <memory>

#include "sloserve/policy/batching/point_estimate.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class NexusBatching : public BatchingPolicy {
 public:
  struct Options {
    double latency_quantile = 0.5;
    Duration epoch = Millis(1000);
    double rate_qps = 0;
  };
  static StatusOr<std::unique_ptr<BatchingPolicy>> Create(const PolicyParams& params,
                                                          std::unique_ptr<SelectionPolicy> sel);
  NexusBatching(Options o, std::unique_ptr<SelectionPolicy> sel)
      : options_(o), selection_(std::move(sel)) {}
  Status Init(const PolicyContext& ctx) override;
  void NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                 BatchDecision* out) override;
  void OnArrival(const Query& q, TimePoint now) override;
  void OnWorkersChanged(const std::vector<WorkerView>& workers) override {
    selection_->OnWorkersChanged(workers);
  }
  // The batch size planned for (hw, variant, slo) at the current rate estimate.
  int PlannedBatch(HardwareId hw, VariantId v, int max_rows, Duration slo);

 private:
  Options options_;
  std::unique_ptr<SelectionPolicy> selection_;
  BatchLatencyEstimate est_;
  size_t workers_ = 1;
  TimePoint epoch_start_{};
  int64_t epoch_arrivals_ = 0;
  double rate_qps_ = 0;  // system-wide estimate
};

}  // namespace sloserve

#pragma once
// Jellyfish+ (RAMSIS section 7, extending Jellyfish [Nigade et al.] to many workers):
// given the anticipated load, the most accurate variant whose summed average throughput
// over all workers exceeds the load and whose inference latency is under half the SLO.
// A variant's per-worker throughput is its adaptive batch (largest batch whose latency
// quantile fits SLO/2) divided by the mean latency of that batch. Workers grab batches
// of up to that size from the central queue: pair with dispatch `shared` and batching
// `edf`. When no variant keeps up, the one with the highest throughput is used.
// Options: window_ms (load monitor, default 500), quantile (default 0.95), variants
// (candidate list, default every variant of the task).
#include "sloserve/policy/selection/load_granular.h"

namespace sloserve {

class JellyfishPlusSelection : public LoadGranularSelection {
 public:
  static StatusOr<std::unique_ptr<SelectionPolicy>> Create(const PolicyParams& params);
  using LoadGranularSelection::LoadGranularSelection;

 protected:
  SelectionDecision Pick(const std::vector<Candidate>& ranked, HardwareId hw, Duration slo,
                         double load_qps) override;
};

}  // namespace sloserve

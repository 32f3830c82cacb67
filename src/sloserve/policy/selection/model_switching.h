#pragma once
// ModelSwitching [Zhang et al.] as RAMSIS section 7 evaluates it: given the anticipated
// load, the most accurate variant whose measured p99 response latency under that load
// (offline, with the simulator: `sloserve profile load-latency`) stays under the SLO.
// It shares Jellyfish+'s implicit load balancing and adaptive batching (dispatch
// `shared`, batching `edf`, batches up to the largest size whose latency fits SLO/2).
// Loads above every measurement count as not met; when no variant qualifies, the one
// with the lowest p99 at that load is used (the least accurate if none was measured).
// Options: table (CSV path, required), window_ms (default 500), quantile (default 0.95),
// variants (candidate list, default every variant of the task).
#include "sloserve/policy/selection/load_granular.h"
#include "sloserve/policy/selection/response_latency_table.h"

namespace sloserve {

class ModelSwitchingSelection : public LoadGranularSelection {
 public:
  static StatusOr<std::unique_ptr<SelectionPolicy>> Create(const PolicyParams& params);
  ModelSwitchingSelection(LoadGranularOptions o, ResponseLatencyTable table)
      : LoadGranularSelection(o), table_(std::move(table)) {}

 protected:
  SelectionDecision Pick(const std::vector<Candidate>& ranked, HardwareId hw, Duration slo,
                         double load_qps) override;

 private:
  ResponseLatencyTable table_;
};

}  // namespace sloserve

#pragma once
// A point estimate of batch latency, as the static-model systems plan with: one number
// per (hardware, variant, rows), the `quantile` of the profile's latency samples for the
// smallest profiled batch >= rows (rows beyond the largest batch scale linearly). For a
// dynamic model the profile's latency table is that of average-length requests, so the
// estimate ignores that a batch runs as long as its longest request (ORLOJ section 2.3).
// Shared by the clockwork, nexus and clipper batching policies.
#include <map>
#include <optional>
#include <vector>

#include "sloserve/core/time.h"
#include "sloserve/policy/interfaces.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

class BatchLatencyEstimate {
 public:
  BatchLatencyEstimate() = default;
  BatchLatencyEstimate(const ProfileSuite* suite, double quantile)
      : suite_(suite), quantile_(quantile) {}
  // Estimated latency of a batch of `rows` rows; Duration(0) when unprofiled.
  Duration Estimate(HardwareId hw, VariantId v, int rows);

 private:
  const ProfileSuite* suite_ = nullptr;
  double quantile_ = 0.5;
  std::map<std::pair<HardwareId, VariantId>, std::vector<Duration>> cache_;  // [rows]
};

// The selection for the queue's head (earliest deadline). When nothing can serve it, the
// head is rejected in `out` (reported unservable) and nullopt is returned.
std::optional<SelectionDecision> SelectForHead(SelectionPolicy& selection, const WorkerView& worker,
                                               const QueueView& queue, TimePoint now,
                                               BatchDecision* out);

}  // namespace sloserve

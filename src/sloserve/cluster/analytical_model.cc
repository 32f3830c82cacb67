#include "sloserve/cluster/analytical_model.h"

#include <algorithm>

namespace sloserve {

LatencyEstimates EstimateLatencies(const ModelTimes& t, double network_s,
                                   const WarmProxy* queue_target, const WarmProxy* registry_target,
                                   bool cold_machine_free) {
  LatencyEstimates e;
  const double own = t.infer + t.pre + t.post;
  const double backlog =
      queue_target == nullptr ? 0 : queue_target->remaining_load + queue_target->ongoing * own;
  if (cold_machine_free) e.colocation = std::max(t.load + own, backlog);
  if (queue_target != nullptr) e.queue = backlog + own;
  if (registry_target != nullptr) {
    // The transfer overlaps the warm proxy's queue: only the longer of the two delays it.
    const double proxy_backlog =
        registry_target->remaining_load + registry_target->ongoing * t.infer;
    e.registry = std::max(t.pre + network_s, proxy_backlog) + t.infer + t.post;
  }
  return e;
}

}  // namespace sloserve

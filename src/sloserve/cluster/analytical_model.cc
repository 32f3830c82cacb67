#include "sloserve/cluster/analytical_model.h"

#include <algorithm>

namespace sloserve {

LatencyEstimates EstimateLatencies(const ModelTimes& t, double network_s,
                                   const WarmProxy* queue_target, const WarmProxy* registry_target,
                                   const WarmProxy* cold_machine) {
  LatencyEstimates e;
  const double own = t.infer + t.pre + t.post;
  const double backlog = queue_target == nullptr
                             ? 0
                             : std::max(queue_target->remaining_load + queue_target->ongoing * own,
                                        queue_target->backlog);
  if (cold_machine != nullptr)
    e.colocation = std::max(cold_machine->backlog + t.load + own, backlog);
  if (queue_target != nullptr) e.queue = backlog + own;
  if (registry_target != nullptr) {
    // The transfer overlaps the warm proxy's queue: only the longer of the two delays it.
    e.registry = std::max(t.pre + network_s, registry_target->backlog) + t.infer + t.post;
  }
  return e;
}

}  // namespace sloserve

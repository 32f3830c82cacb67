#include "sloserve/cluster/directed_placement.h"

namespace sloserve {

PlacementDecision DirectedPlacement::Place(const Query& q, const std::vector<WorkerView>& workers,
                                           const std::vector<MachineView>& machines,
                                           TimePoint now) {
  (void)q;
  (void)workers;
  (void)machines;
  (void)now;
  PlacementDecision d;
  d.worker = next_;
  next_ = kNoId;
  return d;
}

}  // namespace sloserve

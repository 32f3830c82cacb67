#pragma once
// The engine placement of the model-aware cluster experiments: each query goes to the
// worker its submitter named just before submitting it. The procs (proc_arrivals.h)
// decide with the shared rules (placement_rules.h) when they are spawned, before their
// query reaches the engine, so the engine only routes it.
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class DirectedPlacement : public PlacementPolicy {
 public:
  // The worker the next submitted query goes to (kNoId: leave it to dispatch).
  void set_next(WorkerId w) { next_ = w; }
  PlacementDecision Place(const Query& q, const std::vector<WorkerView>& workers,
                          const std::vector<MachineView>& machines, TimePoint now) override;

 private:
  WorkerId next_ = kNoId;
};

}  // namespace sloserve

#pragma once
// Random placement: each query goes to a uniformly random active worker, whatever it
// holds. The default baseline of model-aware scheduling (SigmaOS-style placement
// compares against it). On a multi-model pool only workers serving the query's model
// count (dispatch/worker_eligibility.h). Options: none (randomness from the run's seed).
#include "sloserve/core/rng.h"
#include "sloserve/policy/dispatch/worker_eligibility.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class RandomPlacement : public PlacementPolicy {
 public:
  static StatusOr<std::unique_ptr<PlacementPolicy>> Create(const PolicyParams& params);
  Status Init(const PolicyContext& ctx) override;
  PlacementDecision Place(const Query& q, const std::vector<WorkerView>& workers,
                          const std::vector<MachineView>& machines, TimePoint now) override;

 private:
  Rng rng_;
  WorkerEligibility eligibility_;
};

}  // namespace sloserve

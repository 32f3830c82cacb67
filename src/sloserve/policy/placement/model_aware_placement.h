#pragma once
// Model-aware placement: route a query to an active worker that already holds a variant
// of its task (ready, or already loading: no new cold start), the least loaded such
// worker first; only when no worker holds one does it fall back to the least loaded
// worker overall (which then pays the load). This is the "model colocation with queuing"
// idea of model-aware scheduling; the paper's full policy family lands with the placement
// issue. It never asks for a prefetch (see Place).
// On a multi-model pool only workers serving the query's model count
// (dispatch/worker_eligibility.h).
// Options:
//   warm_variant  only count workers holding this variant (default: any variant of the task)
#include "sloserve/policy/dispatch/worker_eligibility.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class ModelAwarePlacement : public PlacementPolicy {
 public:
  static StatusOr<std::unique_ptr<PlacementPolicy>> Create(const PolicyParams& params);
  explicit ModelAwarePlacement(std::string variant) : variant_name_(std::move(variant)) {}
  Status Init(const PolicyContext& ctx) override;
  PlacementDecision Place(const Query& q, const std::vector<WorkerView>& workers,
                          const std::vector<MachineView>& machines, TimePoint now) override;

 private:
  std::string variant_name_;
  VariantId variant_ = kNoId;
  std::vector<std::vector<VariantId>> task_variants_;  // task -> variants
  size_t rotate_ = 0;                                  // breaks ties in turn
  WorkerEligibility eligibility_;
};

}  // namespace sloserve

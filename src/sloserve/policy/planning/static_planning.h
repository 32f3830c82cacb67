#pragma once
// Static planning: the deployment stays exactly as configured. The reference point
// every planner (InfAdapter, Kairos) is compared with. No options.
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class StaticPlanning : public PlanningPolicy {
 public:
  static StatusOr<std::unique_ptr<PlanningPolicy>> Create(const PolicyParams&) {
    return std::unique_ptr<PlanningPolicy>(new StaticPlanning());
  }
  void Plan(const PlanningInput&, DeploymentPlan* out) override { out->Clear(); }
};

}  // namespace sloserve

#pragma once
// A named combination of dispatch, batching and selection policies (and optionally
// placement and planning) with their options, as written in configs (`policy:` in
// docs/sim.md) and built by the registry. Each option belongs to the chosen policies
// that declare it (PolicyRegistry::OptionsOf).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

struct PolicySpec {
  std::string name;  // label in results; default "<batching>/<dispatch>"
  std::string dispatch = "round_robin";
  std::string batching = "edf";
  std::string selection = "fixed";
  std::string placement;  // "" = none: dispatch alone routes
  std::string planning;   // "" = none: the deployment stays as configured
  // Multi-model: "model=selection,..." replacing those models' own selection policies
  // (models[].policy.selection) in this run; read when the models are built.
  std::string model_selection;
  std::map<std::string, std::string> options;  // each declared by a chosen policy

  std::string Label() const { return name.empty() ? batching + "/" + dispatch : name; }
};

struct PolicySet {
  std::unique_ptr<DispatchPolicy> dispatch;
  std::unique_ptr<BatchingPolicy> batching;
  std::unique_ptr<PlacementPolicy> placement;  // optional
  std::unique_ptr<PlanningPolicy> planning;    // optional
  // The selection inside `batching` moves to faster variants as load rises
  // (SelectionPolicy::follows_load); admission control prices capacity accordingly.
  bool variant_follows_load = false;
  // Multi-model deployments (docs/multi-model.md): a batching policy (with its selection)
  // per model, indexed by TaskId; a missing or null entry uses `batching`. The engine
  // initialises each with its model's task and SLO (EngineOptions::model_slo).
  std::vector<std::unique_ptr<BatchingPolicy>> model_batching;
};

// Builds the policies by name; fails on unknown names, on an option that none of the
// chosen policies declares (naming the near options of the chosen policies and the other
// policies that take it), and on a value its declaration refuses.
StatusOr<PolicySet> MakePolicySet(const PolicySpec& spec);

}  // namespace sloserve

#pragma once
// A named combination of dispatch, batching and selection policies with their shared
// options, as written in configs (`policy:` in docs/sim.md) and built by the registry.
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
  std::string placement;                       // "" = none: dispatch alone routes
  std::string planning;                        // "" = none: the deployment stays as configured
  std::map<std::string, std::string> options;  // read by the three policies together

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
  // Options none of these policies read but another registered policy does (ignored).
  std::vector<std::string> ignored_options;
};

// Builds the policies by name; fails on unknown names and on options that no registered
// policy reads (typos). An option that only policies not chosen here read is ignored and
// listed in `ignored_options`.
StatusOr<PolicySet> MakePolicySet(const PolicySpec& spec);

}  // namespace sloserve

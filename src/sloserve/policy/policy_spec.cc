#include "sloserve/policy/policy_spec.h"

#include "sloserve/policy/registry.h"

namespace sloserve {

StatusOr<PolicySet> MakePolicySet(const PolicySpec& spec) {
  const PolicyRegistry& reg = PolicyRegistry::Builtin();
  PolicyParams params("policy '" + spec.Label() + "'", spec.options);
  ASSIGN_OR_RETURN(auto selection, reg.MakeSelection(spec.selection, params));
  ASSIGN_OR_RETURN(auto batching, reg.MakeBatching(spec.batching, params, std::move(selection)));
  ASSIGN_OR_RETURN(auto dispatch, reg.MakeDispatch(spec.dispatch, params));
  PolicySet set;
  if (!spec.placement.empty()) {
    ASSIGN_OR_RETURN(set.placement, reg.MakePlacement(spec.placement, params));
  }
  if (!spec.planning.empty()) {
    ASSIGN_OR_RETURN(set.planning, reg.MakePlanning(spec.planning, params));
  }
  RETURN_IF_ERROR(params.CheckAllUsed());
  set.dispatch = std::move(dispatch);
  set.batching = std::move(batching);
  return set;
}

}  // namespace sloserve

#include "sloserve/policy/policy_spec.h"

#include "sloserve/core/did_you_mean.h"
#include "sloserve/policy/registry.h"

namespace sloserve {

StatusOr<PolicySet> MakePolicySet(const PolicySpec& spec) {
  const PolicyRegistry& reg = PolicyRegistry::Builtin();
  PolicyParams params("policy '" + spec.Label() + "'", spec.options);
  ASSIGN_OR_RETURN(auto selection, reg.MakeSelection(spec.selection, params));
  const bool follows_load = selection != nullptr && selection->follows_load();
  ASSIGN_OR_RETURN(auto batching, reg.MakeBatching(spec.batching, params, std::move(selection)));
  ASSIGN_OR_RETURN(auto dispatch, reg.MakeDispatch(spec.dispatch, params));
  PolicySet set;
  set.variant_follows_load = follows_load;
  if (!spec.placement.empty()) {
    ASSIGN_OR_RETURN(set.placement, reg.MakePlacement(spec.placement, params));
  }
  if (!spec.planning.empty()) {
    ASSIGN_OR_RETURN(set.planning, reg.MakePlanning(spec.planning, params));
  }
  // An option none of the chosen policies read is fine if another registered policy
  // knows it (a config keeps `variant` for `fixed` when --set switches to `ramsis`); one
  // that no policy knows is a typo.
  for (const std::string& key : params.UnusedKeys()) {
    if (!reg.OptionReaders(key).empty()) {
      set.ignored_options.push_back(key);
      continue;
    }
    // Suggest among the options and the names of the policy kinds (`policy.selction`
    // lands here as an option).
    std::vector<std::string> candidates = reg.KnownOptions();
    for (const char* kind : {"name", "dispatch", "batching", "selection", "placement", "planning"})
      candidates.push_back(kind);
    const std::string best = ClosestName(key, candidates);
    std::string hint;
    if (best.empty()) {
      hint = "no policy reads it; options: docs/policies/";
    } else if (std::vector<std::string> readers = reg.OptionReaders(best); !readers.empty()) {
      hint = "did you mean '" + best + "'? read by: " + JoinNames(readers);
    } else {
      hint = "did you mean '" + best + "'?";
    }
    return InvalidArgumentError("policy '" + spec.Label() + "': unknown policy option '" + key +
                                "' (" + hint + ")");
  }
  set.dispatch = std::move(dispatch);
  set.batching = std::move(batching);
  return set;
}

}  // namespace sloserve

#include "sloserve/policy/policy_spec.h"

#include <algorithm>
#include <utility>

#include "sloserve/core/did_you_mean.h"
#include "sloserve/policy/registry.h"

namespace sloserve {

namespace {

// The chosen policies' names, in OptionsOf(spec)'s order: "round_robin, edf, ramsis".
std::string ChosenNames(const PolicySpec& spec) {
  std::vector<std::string> names;
  for (const std::string* name :
       {&spec.dispatch, &spec.batching, &spec.selection, &spec.placement, &spec.planning}) {
    if (!name->empty()) names.push_back(*name);
  }
  return JoinNames(names);
}

// Every option must be declared by one of the chosen policies. A config that keeps
// `variant` for `fixed` when --set switches the selection to `ramsis` fails here, naming
// the policies that do take it, rather than run without the option it meant.
Status CheckOptionsDeclared(const PolicySpec& spec, const PolicyRegistry& reg) {
  const std::vector<KeyDecl> declared = reg.OptionsOf(spec);
  std::vector<std::string> candidates;
  for (const KeyDecl& key : declared) candidates.push_back(key.name);
  for (const auto& option : spec.options) {
    const std::string& key = option.first;  // a name, not a binding: clang 14 cannot capture those
    if (std::find(candidates.begin(), candidates.end(), key) != candidates.end()) continue;
    // Suggest among the chosen policies' options and the names of the policy kinds
    // (`policy.selction` lands here as an option).
    std::vector<std::string> near = candidates;
    for (const char* kind : {"name", "dispatch", "batching", "selection", "placement", "planning"})
      near.push_back(kind);
    std::string msg = "policy '" + spec.Label() + "': option '" + key +
                      "' is not taken by the chosen policies (" + ChosenNames(spec) + ")";
    const std::string best = ClosestName(key, near);
    std::string hint = best.empty() ? "" : "did you mean '" + best + "'?";
    if (const std::vector<std::string> readers = reg.OptionReaders(key); !readers.empty()) {
      hint += (hint.empty() ? "" : " ") + std::string("it is an option of: ") + JoinNames(readers);
    } else if (best.empty()) {
      // A typo of another policy's option: suggest it and say whose it is.
      std::vector<std::string> all;
      for (const KeyDecl& k : reg.AllOptions()) all.push_back(k.name);
      if (const std::string other = ClosestName(key, all); !other.empty()) {
        hint = "did you mean '" + other +
               "'? (an option of: " + JoinNames(reg.OptionReaders(other)) + ")";
      } else {
        hint = "no policy takes it (a policy's options: sloserve policies --describe NAME)";
      }
    }
    return InvalidArgumentError(msg + "; " + hint);
  }
  return OkStatus();
}

}  // namespace

StatusOr<PolicySet> MakePolicySet(const PolicySpec& spec) {
  const PolicyRegistry& reg = PolicyRegistry::Builtin();
  // Unknown policy names first (their error lists the known ones), then the options.
  for (const auto& [kind, name] :
       {std::pair<const char*, const std::string*>{"dispatch", &spec.dispatch},
        {"batching", &spec.batching},
        {"selection", &spec.selection},
        {"placement", &spec.placement},
        {"planning", &spec.planning}}) {
    if (name->empty() && (std::string(kind) == "placement" || std::string(kind) == "planning"))
      continue;
    if (reg.KindOf(*name) != kind) return reg.UnknownPolicyError(kind, *name);
  }
  RETURN_IF_ERROR(CheckOptionsDeclared(spec, reg));
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
  set.dispatch = std::move(dispatch);
  set.batching = std::move(batching);
  return set;
}

}  // namespace sloserve

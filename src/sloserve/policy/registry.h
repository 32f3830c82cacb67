#pragma once
// Policies are chosen by name from configs and the CLI: a name -> factory map per
// decision kind. Adding a policy means one Register call in builtin_policies.cc.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sloserve/core/declared_key.h"
#include "sloserve/core/status.h"
#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/policy_spec.h"

namespace sloserve {

using SelectionFactory =
    std::function<StatusOr<std::unique_ptr<SelectionPolicy>>(const PolicyParams&)>;
// Batching policies that pick a variant delegate to a selection policy.
using BatchingFactory = std::function<StatusOr<std::unique_ptr<BatchingPolicy>>(
    const PolicyParams&, std::unique_ptr<SelectionPolicy>)>;
using DispatchFactory =
    std::function<StatusOr<std::unique_ptr<DispatchPolicy>>(const PolicyParams&)>;
using PlacementFactory =
    std::function<StatusOr<std::unique_ptr<PlacementPolicy>>(const PolicyParams&)>;
using PlanningFactory =
    std::function<StatusOr<std::unique_ptr<PlanningPolicy>>(const PolicyParams&)>;

struct PolicyInfo {
  std::string name;
  std::string summary;
};

class PolicyRegistry {
 public:
  // The registry with every built-in policy registered.
  static const PolicyRegistry& Builtin();

  void AddSelection(const std::string& name, const std::string& summary, SelectionFactory f);
  void AddBatching(const std::string& name, const std::string& summary, BatchingFactory f);
  void AddDispatch(const std::string& name, const std::string& summary, DispatchFactory f);
  void AddPlacement(const std::string& name, const std::string& summary, PlacementFactory f);
  void AddPlanning(const std::string& name, const std::string& summary, PlanningFactory f);

  StatusOr<std::unique_ptr<SelectionPolicy>> MakeSelection(const std::string& name,
                                                           const PolicyParams& p) const;
  StatusOr<std::unique_ptr<BatchingPolicy>> MakeBatching(
      const std::string& name, const PolicyParams& p,
      std::unique_ptr<SelectionPolicy> selection) const;
  StatusOr<std::unique_ptr<DispatchPolicy>> MakeDispatch(const std::string& name,
                                                         const PolicyParams& p) const;
  StatusOr<std::unique_ptr<PlacementPolicy>> MakePlacement(const std::string& name,
                                                           const PolicyParams& p) const;
  StatusOr<std::unique_ptr<PlanningPolicy>> MakePlanning(const std::string& name,
                                                         const PolicyParams& p) const;

  std::vector<PolicyInfo> SelectionPolicies() const;
  std::vector<PolicyInfo> BatchingPolicies() const;
  std::vector<PolicyInfo> DispatchPolicies() const;
  std::vector<PolicyInfo> PlacementPolicies() const;
  std::vector<PolicyInfo> PlanningPolicies() const;

  // Every registered policy name, of any kind, sorted.
  std::vector<std::string> PolicyNames() const;
  // "selection", "batching", "dispatch", "placement" or "planning"; "" = not registered.
  std::string KindOf(const std::string& policy_name) const;
  // "unknown <kind> policy '<name>' (did you mean ...? known: ...)" (NotFound).
  Status UnknownPolicyError(const std::string& kind, const std::string& name) const;

  // Options, from the declarations the policies' factories read (see registry.cc).
  // The options policy `policy_name` (of any kind) declares, in the order its factory
  // reads them; empty for an unknown name or a policy without options.
  std::vector<KeyDecl> OptionsOf(const std::string& policy_name) const;
  // The options of the policies `spec` chooses (dispatch, batching, selection, placement,
  // planning, in that order), one declaration per name: what `spec.options` may set.
  std::vector<KeyDecl> OptionsOf(const PolicySpec& spec) const;
  // Every option of every registered policy, one declaration per name, sorted by name.
  // Where policies declare a name differently (headroom: (0, 1] for infadapter, > 0 for
  // rate) the declaration is their hull: the widest range, the default and unit only
  // where all agree, every choice; the type and help of the first policy by name.
  std::vector<KeyDecl> AllOptions() const;
  // Which registered policies (of any kind, by name, sorted) declare option `key`; empty
  // = no registered policy takes it (a typo).
  std::vector<std::string> OptionReaders(const std::string& key) const;

 private:
  // Records the declarations the factory of policy `name` asks for (see registry.cc).
  void LearnOptions(const std::string& name, const PolicyParams& probed);
  template <typename F>
  struct Entry {
    std::string summary;
    F factory;
  };
  std::map<std::string, Entry<SelectionFactory>> selection_;
  std::map<std::string, Entry<BatchingFactory>> batching_;
  std::map<std::string, Entry<DispatchFactory>> dispatch_;
  std::map<std::string, Entry<PlacementFactory>> placement_;
  std::map<std::string, Entry<PlanningFactory>> planning_;
  std::map<std::string, std::vector<KeyDecl>> options_;  // policy -> its options, read order
};

void RegisterBuiltinPolicies(PolicyRegistry* registry);

}  // namespace sloserve

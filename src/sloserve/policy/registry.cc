#include "sloserve/policy/registry.h"

#include <algorithm>

#include "sloserve/core/did_you_mean.h"
#include "sloserve/policy/selection/row_fit_selection.h"

namespace sloserve {
namespace {

// Which options does each policy declare? Every option is a KeyDecl next to the factory
// that reads it (the getters of PolicyParams take the declaration). Every factory runs
// once, when it is registered, on empty params, and the declarations its getters (and
// Has) asked for are recorded (LearnOptions). Unlike a hand-kept list per registration
// this cannot drift from the code that reads the options. The price: a factory must ask
// for each option before it fails on empty params (a required option is read last), and
// not only behind a branch on another option's value. A test checks that the probe finds
// every option documented on docs/policies/<name>.md
// (PolicyOptionsTest.ProbedOptionsCoverTheDocumentedOptions).
PolicyParams ProbeParams() {
  return PolicyParams("probe", {});
}

// Stands in for the selection policy a batching factory is handed while probed.
class ProbeSelection : public SelectionPolicy {
 public:
  SelectionDecision Choose(const WorkerView&, const QueueView&, const Query&, TimePoint) override {
    return {};
  }
};

template <typename M>
std::string KnownNames(const M& m) {
  std::string out;
  for (const auto& [name, entry] : m) out += (out.empty() ? "" : ", ") + name;
  return out;
}

template <typename M>
std::vector<PolicyInfo> Infos(const M& m) {
  std::vector<PolicyInfo> out;
  for (const auto& [name, entry] : m) out.push_back({name, entry.summary});
  return out;
}

template <typename M>
Status UnknownPolicy(const char* kind, const std::string& name, const M& m) {
  std::vector<std::string> names;
  for (const auto& [known, entry] : m) names.push_back(known);
  return NotFoundError(std::string("unknown ") + kind + " policy '" + name + "' (" +
                       DidYouMean(name, names) + "known: " + KnownNames(m) + ")");
}

}  // namespace

const PolicyRegistry& PolicyRegistry::Builtin() {
  static const PolicyRegistry* registry = [] {
    auto* r = new PolicyRegistry();
    RegisterBuiltinPolicies(r);
    return r;
  }();
  return *registry;
}

void PolicyRegistry::LearnOptions(const std::string& name, const PolicyParams& probed) {
  options_[name] = probed.AskedKeys();
}

// Each Add probes the factory (the result, a policy or an error, is discarded).
void PolicyRegistry::AddSelection(const std::string& name, const std::string& summary,
                                  SelectionFactory f) {
  PolicyParams probe = ProbeParams();
  (void)f(probe);
  LearnOptions(name, probe);
  selection_[name] = {summary, std::move(f)};
}
void PolicyRegistry::AddBatching(const std::string& name, const std::string& summary,
                                 BatchingFactory f) {
  PolicyParams probe = ProbeParams();
  (void)f(probe, std::make_unique<ProbeSelection>());
  LearnOptions(name, probe);
  batching_[name] = {summary, std::move(f)};
}
void PolicyRegistry::AddDispatch(const std::string& name, const std::string& summary,
                                 DispatchFactory f) {
  PolicyParams probe = ProbeParams();
  (void)f(probe);
  LearnOptions(name, probe);
  dispatch_[name] = {summary, std::move(f)};
}

void PolicyRegistry::AddPlacement(const std::string& name, const std::string& summary,
                                  PlacementFactory f) {
  PolicyParams probe = ProbeParams();
  (void)f(probe);
  LearnOptions(name, probe);
  placement_[name] = {summary, std::move(f)};
}
void PolicyRegistry::AddPlanning(const std::string& name, const std::string& summary,
                                 PlanningFactory f) {
  PolicyParams probe = ProbeParams();
  (void)f(probe);
  LearnOptions(name, probe);
  planning_[name] = {summary, std::move(f)};
}

std::vector<std::string> PolicyRegistry::PolicyNames() const {
  std::vector<std::string> out;
  for (const auto& [name, options] : options_) out.push_back(name);
  return out;  // a std::map's keys: sorted
}

std::string PolicyRegistry::KindOf(const std::string& policy_name) const {
  if (selection_.count(policy_name)) return "selection";
  if (batching_.count(policy_name)) return "batching";
  if (dispatch_.count(policy_name)) return "dispatch";
  if (placement_.count(policy_name)) return "placement";
  if (planning_.count(policy_name)) return "planning";
  return "";
}

Status PolicyRegistry::UnknownPolicyError(const std::string& kind, const std::string& name) const {
  if (kind == "selection") return UnknownPolicy("selection", name, selection_);
  if (kind == "batching") return UnknownPolicy("batching", name, batching_);
  if (kind == "dispatch") return UnknownPolicy("dispatch", name, dispatch_);
  if (kind == "placement") return UnknownPolicy("placement", name, placement_);
  return UnknownPolicy("planning", name, planning_);
}

std::vector<KeyDecl> PolicyRegistry::OptionsOf(const std::string& policy_name) const {
  auto it = options_.find(policy_name);
  return it == options_.end() ? std::vector<KeyDecl>{} : it->second;
}

std::vector<KeyDecl> PolicyRegistry::OptionsOf(const PolicySpec& spec) const {
  std::vector<KeyDecl> out;
  for (const std::string* name :
       {&spec.dispatch, &spec.batching, &spec.selection, &spec.placement, &spec.planning}) {
    if (name->empty()) continue;
    for (const KeyDecl& key : OptionsOf(*name)) {
      if (std::none_of(out.begin(), out.end(),
                       [&](const KeyDecl& k) { return k.name == key.name; }))
        out.push_back(key);
    }
  }
  return out;
}

std::vector<KeyDecl> PolicyRegistry::AllOptions() const {
  std::map<std::string, KeyDecl> merged;
  for (const auto& [policy, options] : options_) {  // by policy name
    for (const KeyDecl& key : options) {
      auto [it, fresh] = merged.emplace(key.name, key);
      if (fresh) continue;
      KeyDecl& m = it->second;
      if (key.min < m.min || (key.min == m.min && !key.min_exclusive)) {
        m.min_exclusive = key.min_exclusive;
        m.min = key.min;
      }
      m.max = std::max(m.max, key.max);
      if (m.default_value != key.default_value) m.default_value.clear();
      if (m.unit != key.unit) m.unit.clear();
      for (const std::string& c : key.choices) {
        if (std::find(m.choices.begin(), m.choices.end(), c) == m.choices.end())
          m.choices.push_back(c);
      }
    }
  }
  std::vector<KeyDecl> out;
  for (auto& [name, key] : merged) out.push_back(std::move(key));
  return out;
}

std::vector<std::string> PolicyRegistry::OptionReaders(const std::string& key) const {
  std::vector<std::string> out;
  for (const auto& [policy, options] : options_) {  // by policy name: sorted
    if (std::any_of(options.begin(), options.end(),
                    [&](const KeyDecl& k) { return k.name == key; }))
      out.push_back(policy);
  }
  return out;
}

StatusOr<std::unique_ptr<PlacementPolicy>> PolicyRegistry::MakePlacement(
    const std::string& name, const PolicyParams& p) const {
  auto it = placement_.find(name);
  if (it == placement_.end()) return UnknownPolicy("placement", name, placement_);
  return it->second.factory(p.WithOwner("placement policy '" + name + "'"));
}

StatusOr<std::unique_ptr<PlanningPolicy>> PolicyRegistry::MakePlanning(
    const std::string& name, const PolicyParams& p) const {
  auto it = planning_.find(name);
  if (it == planning_.end()) return UnknownPolicy("planning", name, planning_);
  return it->second.factory(p.WithOwner("planning policy '" + name + "'"));
}

StatusOr<std::unique_ptr<SelectionPolicy>> PolicyRegistry::MakeSelection(
    const std::string& name, const PolicyParams& p) const {
  auto it = selection_.find(name);
  if (it == selection_.end()) return UnknownPolicy("selection", name, selection_);
  return it->second.factory(p.WithOwner("selection policy '" + name + "'"));
}

StatusOr<std::unique_ptr<BatchingPolicy>> PolicyRegistry::MakeBatching(
    const std::string& name, const PolicyParams& p,
    std::unique_ptr<SelectionPolicy> selection) const {
  auto it = batching_.find(name);
  if (it == batching_.end()) return UnknownPolicy("batching", name, batching_);
  // Every batching policy forms batches that hold a multi-row request whole.
  if (selection) selection = std::make_unique<RowFitSelection>(std::move(selection));
  return it->second.factory(p.WithOwner("batching policy '" + name + "'"), std::move(selection));
}

StatusOr<std::unique_ptr<DispatchPolicy>> PolicyRegistry::MakeDispatch(
    const std::string& name, const PolicyParams& p) const {
  auto it = dispatch_.find(name);
  if (it == dispatch_.end()) return UnknownPolicy("dispatch", name, dispatch_);
  return it->second.factory(p.WithOwner("dispatch policy '" + name + "'"));
}

std::vector<PolicyInfo> PolicyRegistry::SelectionPolicies() const {
  return Infos(selection_);
}
std::vector<PolicyInfo> PolicyRegistry::BatchingPolicies() const {
  return Infos(batching_);
}
std::vector<PolicyInfo> PolicyRegistry::DispatchPolicies() const {
  return Infos(dispatch_);
}
std::vector<PolicyInfo> PolicyRegistry::PlacementPolicies() const {
  return Infos(placement_);
}
std::vector<PolicyInfo> PolicyRegistry::PlanningPolicies() const {
  return Infos(planning_);
}

}  // namespace sloserve

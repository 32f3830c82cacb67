#include "sloserve/policy/registry.h"

#include <algorithm>

#include "sloserve/core/did_you_mean.h"
#include "sloserve/policy/selection/row_fit_selection.h"

namespace sloserve {
namespace {

// Which options does each policy know? Every factory runs once, when it is registered,
// on empty params, and the keys its getters (and Has) asked for are recorded
// (LearnOptions). Unlike a hand-kept key list per registration this cannot drift from
// the code that reads the options. The price: a factory must ask for each key it knows
// before it fails on empty params, and not only behind a branch on another option's
// value. The built-in factories read every option up front; a test checks that the probe
// finds every option documented on docs/policies/<name>.md
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
  for (const std::string& key : probed.AskedKeys()) {
    std::vector<std::string>& readers = option_readers_[key];
    if (std::find(readers.begin(), readers.end(), name) != readers.end()) continue;
    readers.push_back(name);
    std::sort(readers.begin(), readers.end());
  }
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

std::vector<std::string> PolicyRegistry::OptionReaders(const std::string& key) const {
  auto it = option_readers_.find(key);
  return it == option_readers_.end() ? std::vector<std::string>{} : it->second;
}

std::vector<std::string> PolicyRegistry::KnownOptions() const {
  std::vector<std::string> out;
  for (const auto& [key, readers] : option_readers_) out.push_back(key);
  return out;
}

std::vector<KeyDecl> PolicyRegistry::AllOptions() const {
  std::vector<KeyDecl> out;
  for (const auto& [key, readers] : option_readers_) {
    out.push_back({.name = key, .help = "option of " + JoinNames(readers)});
  }
  return out;
}

std::vector<KeyDecl> PolicyRegistry::OptionsOf(const PolicySpec& spec) const {
  std::vector<KeyDecl> out;
  const std::vector<std::string> chosen = {spec.dispatch, spec.batching, spec.selection,
                                           spec.placement, spec.planning};
  for (const auto& [key, readers] : option_readers_) {
    for (const std::string& r : readers) {
      if (std::find(chosen.begin(), chosen.end(), r) != chosen.end()) {
        out.push_back({.name = key, .help = "option of " + JoinNames(readers)});
        break;
      }
    }
  }
  return out;
}

StatusOr<std::unique_ptr<PlacementPolicy>> PolicyRegistry::MakePlacement(
    const std::string& name, const PolicyParams& p) const {
  auto it = placement_.find(name);
  if (it == placement_.end()) return UnknownPolicy("placement", name, placement_);
  return it->second.factory(p);
}

StatusOr<std::unique_ptr<PlanningPolicy>> PolicyRegistry::MakePlanning(
    const std::string& name, const PolicyParams& p) const {
  auto it = planning_.find(name);
  if (it == planning_.end()) return UnknownPolicy("planning", name, planning_);
  return it->second.factory(p);
}

StatusOr<std::unique_ptr<SelectionPolicy>> PolicyRegistry::MakeSelection(
    const std::string& name, const PolicyParams& p) const {
  auto it = selection_.find(name);
  if (it == selection_.end()) return UnknownPolicy("selection", name, selection_);
  return it->second.factory(p);
}

StatusOr<std::unique_ptr<BatchingPolicy>> PolicyRegistry::MakeBatching(
    const std::string& name, const PolicyParams& p,
    std::unique_ptr<SelectionPolicy> selection) const {
  auto it = batching_.find(name);
  if (it == batching_.end()) return UnknownPolicy("batching", name, batching_);
  // Every batching policy forms batches that hold a multi-row request whole.
  if (selection) selection = std::make_unique<RowFitSelection>(std::move(selection));
  return it->second.factory(p, std::move(selection));
}

StatusOr<std::unique_ptr<DispatchPolicy>> PolicyRegistry::MakeDispatch(
    const std::string& name, const PolicyParams& p) const {
  auto it = dispatch_.find(name);
  if (it == dispatch_.end()) return UnknownPolicy("dispatch", name, dispatch_);
  return it->second.factory(p);
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

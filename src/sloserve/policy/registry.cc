#include "sloserve/policy/registry.h"

namespace sloserve {
namespace {

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
  return NotFoundError(std::string("unknown ") + kind + " policy '" + name +
                       "' (known: " + KnownNames(m) + ")");
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

void PolicyRegistry::AddSelection(const std::string& name, const std::string& summary,
                                  SelectionFactory f) {
  selection_[name] = {summary, std::move(f)};
}
void PolicyRegistry::AddBatching(const std::string& name, const std::string& summary,
                                 BatchingFactory f) {
  batching_[name] = {summary, std::move(f)};
}
void PolicyRegistry::AddDispatch(const std::string& name, const std::string& summary,
                                 DispatchFactory f) {
  dispatch_[name] = {summary, std::move(f)};
}

void PolicyRegistry::AddPlacement(const std::string& name, const std::string& summary,
                                  PlacementFactory f) {
  placement_[name] = {summary, std::move(f)};
}
void PolicyRegistry::AddPlanning(const std::string& name, const std::string& summary,
                                 PlanningFactory f) {
  planning_[name] = {summary, std::move(f)};
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

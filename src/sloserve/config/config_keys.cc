#include "sloserve/config/config_keys.h"

#include <map>

#include "sloserve/config/hardware_prices.h"
#include "sloserve/config/model_config.h"
#include "sloserve/config/run_config.h"
#include "sloserve/config/server_config.h"
#include "sloserve/policy/registry.h"

namespace sloserve {
namespace {

std::vector<KeyDecl> Copies(const std::vector<const KeyDecl*>& keys) {
  std::vector<KeyDecl> out;
  for (const KeyDecl* k : keys) out.push_back(*k);
  return out;
}

std::vector<KeySection> BuildSections() {
  std::vector<KeySection> sections;
  std::vector<KeyDecl> run = Copies(RunKeys());
  auto section_of = [](const std::string& name) {
    if (name.rfind("workload.", 0) == 0) return 1;
    if (name.rfind("executor.", 0) == 0 || name.rfind("engine.", 0) == 0) return 2;
    return 0;
  };
  sections.push_back({"Deployment", {}});
  sections.push_back({"Workload (sim)", {}});
  sections.push_back({"Executor and engine", {}});
  for (KeyDecl& k : run) sections[section_of(k.name)].keys.push_back(std::move(k));
  KeySection policy{"Policy", Copies(PolicyNameKeys())};
  for (KeyDecl option : PolicyRegistry::Builtin().AllOptions()) {
    option.name = "policy." + option.name;
    policy.keys.push_back(std::move(option));
  }
  sections.push_back(std::move(policy));
  sections.push_back({"Server (serve)", Copies(ServerKeys())});
  sections.push_back({"Planning (plan kairos)", Copies(PlanKeys())});
  // `models:` entries (docs/multi-model.md): their keys as written inside an entry, shown
  // under "models[]."; not keys of a config's top level.
  KeySection models{"Models (multi-model deployments)", Copies(ModelDeploymentKeys())};
  for (const KeyDecl* k : ModelEntryKeys()) {
    KeyDecl entry = *k;
    entry.name = std::string(kModelEntryPrefix) + entry.name;
    models.keys.push_back(std::move(entry));
  }
  sections.push_back(std::move(models));
  return sections;
}

std::vector<std::string> NamesOf(const std::vector<PolicyInfo>& infos) {
  std::vector<std::string> out;
  for (const PolicyInfo& i : infos) out.push_back(i.name);
  return out;
}

}  // namespace

const std::vector<std::string>* PolicyNamesOfKind(const std::string& kind) {
  static const std::map<std::string, std::vector<std::string>> kinds = [] {
    const PolicyRegistry& r = PolicyRegistry::Builtin();
    return std::map<std::string, std::vector<std::string>>{
        {"dispatch", NamesOf(r.DispatchPolicies())},
        {"batching", NamesOf(r.BatchingPolicies())},
        {"selection", NamesOf(r.SelectionPolicies())},
        {"placement", NamesOf(r.PlacementPolicies())},
        {"planning", NamesOf(r.PlanningPolicies())}};
  }();
  auto it = kinds.find(kind);
  return it == kinds.end() ? nullptr : &it->second;
}

bool IsModelEntryKeyName(const std::string& name) {
  return name.rfind(kModelEntryPrefix, 0) == 0;
}

const std::vector<KeySection>& ConfigSections() {
  static const std::vector<KeySection> sections = BuildSections();
  return sections;
}

const KeyDecl* FindConfigKey(const std::string& key) {
  static const std::map<std::string, const KeyDecl*> index = [] {
    std::map<std::string, const KeyDecl*> m;
    for (const KeySection& s : ConfigSections())
      for (const KeyDecl& k : s.keys) {
        if (!IsModelEntryKeyName(k.name)) m.emplace(k.name, &k);
      }
    return m;
  }();
  // Every hardware_prices.TYPE shares one declaration: the types are the suite's.
  auto it = index.find(IsHardwarePriceKey(key) ? HardwarePriceKey().name : key);
  return it == index.end() ? nullptr : it->second;
}

const std::vector<std::string>& ConfigKeyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const KeySection& s : ConfigSections())
      for (const KeyDecl& k : s.keys) {
        if (!IsModelEntryKeyName(k.name)) out.push_back(k.name);
      }
    return out;
  }();
  return names;
}

}  // namespace sloserve

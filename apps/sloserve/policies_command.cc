// `sloserve policies [--json]`: every policy selectable by name, per decision kind.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "sloserve/cluster/placement_rules.h"
#include "sloserve/policy/placement/cluster_placement.h"
#include "sloserve/policy/registry.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace policies_cmd {

const std::vector<FlagSpec> kFlags = {{"json", "", "print as JSON"},
                                      {"help", "", "show this help"}};

void PrintHelp() {
  std::printf(
      "usage: sloserve policies [--json]\n\nLists the policies selectable by name in configs "
      "(policy.dispatch, policy.batching,\npolicy.selection, policy.placement, "
      "policy.planning), and the model-aware placement policies of a sim config's cluster:\n"
      "section (docs/model-aware.md): the same names and decision rules as the placements.\n\n"
      "options:\n%s",
      FlagsHelp(kFlags).c_str());
}

// The cluster simulator's policies are the placements of the same names (one name, one
// rule); `random` is the placement `random`, model-unaware.
std::string ClusterSummary(const std::string& name) {
  const ClusterPolicy p = ParseClusterPolicy(name).value();
  if (p == ClusterPolicy::kRandom) return "the thesis' default: a random machine with free cores";
  return ClusterPlacementSummary(p);
}

Status Run(const Args& args) {
  const PolicyRegistry& reg = PolicyRegistry::Builtin();
  const std::pair<const char*, std::vector<PolicyInfo>> kinds[] = {
      {"dispatch", reg.DispatchPolicies()},   {"batching", reg.BatchingPolicies()},
      {"selection", reg.SelectionPolicies()}, {"placement", reg.PlacementPolicies()},
      {"planning", reg.PlanningPolicies()},
  };
  if (args.Has("json")) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [kind, list] : kinds) {
      for (const PolicyInfo& p : list) {
        out.push_back({{"kind", kind}, {"name", p.name}, {"summary", p.summary}});
      }
    }
    for (const std::string& name : ClusterPolicyNames()) {
      out.push_back({{"kind", "cluster"}, {"name", name}, {"summary", ClusterSummary(name)}});
    }
    std::cout << out.dump(2) << std::endl;
    return OkStatus();
  }
  for (const auto& [kind, list] : kinds) {
    std::printf("%s:\n", kind);
    for (const PolicyInfo& p : list) std::printf("  %-14s %s\n", p.name.c_str(), p.summary.c_str());
  }
  std::printf("cluster (sim configs with a cluster: section; docs/model-aware.md):\n");
  for (const std::string& name : ClusterPolicyNames()) {
    std::printf("  %-14s %s\n", name.c_str(), ClusterSummary(name).c_str());
  }
  return OkStatus();
}

}  // namespace policies_cmd

int PoliciesCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("policies", argv, policies_cmd::kFlags, policies_cmd::PrintHelp,
                       policies_cmd::Run, 0);
}

}  // namespace sloserve::cli

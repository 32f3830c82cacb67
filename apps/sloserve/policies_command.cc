// `sloserve policies [--json]`: every policy selectable by name, per decision kind.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "sloserve/policy/registry.h"

namespace sloserve::cli {
namespace {

const std::vector<FlagSpec> kFlags = {{"json", "", "print as JSON"},
                                      {"help", "", "show this help"}};

void PrintHelp() {
  std::printf(
      "usage: sloserve policies [--json]\n\nLists the policies selectable by name in configs "
      "(policy.dispatch, policy.batching,\npolicy.selection, policy.placement, "
      "policy.planning).\n\noptions:\n%s",
      FlagsHelp(kFlags).c_str());
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
    std::cout << out.dump(2) << std::endl;
    return OkStatus();
  }
  for (const auto& [kind, list] : kinds) {
    std::printf("%s:\n", kind);
    for (const PolicyInfo& p : list) std::printf("  %-14s %s\n", p.name.c_str(), p.summary.c_str());
  }
  return OkStatus();
}

}  // namespace

int PoliciesCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("policies", argv, kFlags, PrintHelp, Run);
}

}  // namespace sloserve::cli

// `sloserve policies [--json]`: every policy selectable by name, per decision kind.
// `sloserve policies --describe NAME [--json]`: one policy's options, from their
// declarations (name, type, default, unit, allowed range or choices, help).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "sloserve/cluster/placement_rules.h"
#include "sloserve/core/did_you_mean.h"
#include "sloserve/policy/placement/cluster_placement.h"
#include "sloserve/policy/registry.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace policies_cmd {

const std::vector<FlagSpec> kFlags = {
    {"describe", "NAME",
     "list policy NAME's options (name, type, default, unit, allowed values, help)"},
    {"json", "", "print as JSON"},
    {"help", "", "show this help"}};

void PrintHelp() {
  std::printf(
      "usage: sloserve policies [--json]\n"
      "       sloserve policies --describe NAME [--json]\n\n"
      "Lists the policies selectable by name in configs (policy.dispatch, policy.batching,\n"
      "policy.selection, policy.placement, policy.planning), and the model-aware placement\n"
      "policies of a sim config's cluster: section (docs/model-aware.md): the same names and\n"
      "decision rules as the placements.\n\n"
      "--describe NAME lists the options policy NAME takes (set them under `policy:` in a\n"
      "config, or with --set policy.OPTION=VALUE): each option's type, default, unit, allowed\n"
      "range or choices and a one-line description. An option is accepted only when one of\n"
      "the chosen policies takes it. Docs: docs/policies/NAME.md.\n\n"
      "options:\n%s",
      FlagsHelp(kFlags).c_str());
}

std::string Summary(const PolicyRegistry& reg, const std::string& name) {
  for (const auto& list : {reg.SelectionPolicies(), reg.BatchingPolicies(), reg.DispatchPolicies(),
                           reg.PlacementPolicies(), reg.PlanningPolicies()}) {
    for (const PolicyInfo& p : list) {
      if (p.name == name) return p.summary;
    }
  }
  return "";
}

nlohmann::json OptionJson(const KeyDecl& key) {
  nlohmann::json o = {
      {"name", key.name}, {"type", KeyTypeName(key.type)}, {"default", key.default_value},
      {"unit", key.unit}, {"allowed", AllowedText(key)},   {"help", key.help}};
  if (std::isfinite(key.min)) o["min"] = key.min;
  if (std::isfinite(key.max)) o["max"] = key.max;
  if (std::isfinite(key.min)) o["min_exclusive"] = key.min_exclusive;
  if (!key.choices.empty()) o["choices"] = key.choices;
  return o;
}

Status Describe(const PolicyRegistry& reg, const std::string& name, bool json) {
  const std::string kind = reg.KindOf(name);
  if (kind.empty()) {
    const std::vector<std::string> names = reg.PolicyNames();
    return NotFoundError("unknown policy '" + name + "' (" + DidYouMean(name, names) +
                         "known: " + JoinNames(names) + ")");
  }
  const std::vector<KeyDecl> options = reg.OptionsOf(name);
  if (json) {
    nlohmann::json out = {{"name", name},
                          {"kind", kind},
                          {"summary", Summary(reg, name)},
                          {"options", nlohmann::json::array()}};
    for (const KeyDecl& key : options) out["options"].push_back(OptionJson(key));
    std::cout << out.dump(2) << std::endl;
    return OkStatus();
  }
  std::printf("%s (%s policy): %s\n", name.c_str(), kind.c_str(), Summary(reg, name).c_str());
  std::printf("docs: docs/policies/%s.md\n\n", name.c_str());
  if (options.empty()) {
    std::printf("options: none\n");
    return OkStatus();
  }
  // One row per option, columns aligned; "-" where a column has nothing to say.
  std::vector<std::vector<std::string>> rows = {
      {"option", "type", "default", "unit", "allowed", "description"}};
  for (const KeyDecl& key : options) {
    const std::string allowed = AllowedText(key);
    rows.push_back({key.name, KeyTypeName(key.type),
                    key.default_value.empty() ? "-" : key.default_value,
                    key.unit.empty() ? "-" : key.unit, allowed.empty() ? "-" : allowed, key.help});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      line += " " + row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 1, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
  return OkStatus();
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
  if (args.Has("describe")) return Describe(reg, args.Get("describe"), args.Has("json"));
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

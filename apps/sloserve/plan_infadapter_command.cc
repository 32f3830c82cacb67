// `sloserve plan infadapter CONFIG.yaml --load RPS`: what InfAdapter's planner (EuroMLSys'23,
// Eq. 1; docs/infadapter.md) decides for a forecast rate, without a simulation: the
// variants, their cores, capacities and quotas, and the objective's terms. The plan comes
// from the config's planning policy itself (InfAdapterPlanning::PlanFor), so `--set
// policy.beta=...` and the config's options mean what they mean in `sim` and `serve`.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/engine/deployment.h"
#include "sloserve/infadapter/exhaustive.h"
#include "sloserve/policy/planning/infadapter_planning.h"
#include "sloserve/policy/policy_spec.h"
#include "sloserve/profile/profile.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace plan_infadapter_cmd {

const std::vector<FlagSpec> kFlags = {
    {"load", "RPS", "the rate to plan for (lambda in Eq. 1)"},
    {"loads", "A,B,...", "several rates: one row each"},
    {"loaded", "VARIANT:CORES,...",
     "the deployed state: variants already running at those core counts (default nothing)"},
    {"set", "KEY=VALUE", "override a config key, as in sim (e.g. policy.beta=0.5)", true},
    {"policy", "NAME",
     "the planning policy of the config to use (default: the first infadapter one)"},
    {"rule", "paper|reference-ilp|reference-brute-force",
     "which plans compete (default paper; the reference code's two solvers, by enumeration)"},
    {"json", "", "print JSON"},
    {"help", "", "show this help"},
};

void PrintHelp() {
  std::printf(
      "usage: sloserve plan infadapter CONFIG.yaml (--load RPS | --loads A,B,...) [options]\n\n"
      "What InfAdapter's planner decides at one solve: Eq. 1 (accuracy as a fraction, minus\n"
      "beta x cores / budget and gamma x load time / the largest load time) for the rate\n"
      "given, with the config's suite, SLO and planning options. A running policy solves\n"
      "for its forecast times 1 + margin; here the rate is taken as given. Prints, per\n"
      "variant used, cores, capacity and quota (rps), then the objective, the average\n"
      "accuracy AA (%%), total cores, the load cost LC (s) and the shortfall (rps).\n"
      "ms_plus and vpa_plus policies (--policy) print their baselines' plans.\n"
      "docs/infadapter.md.\n\n"
      "options:\n%s"
      "\nexamples:\n"
      "  sloserve plan infadapter experiments/infadapter/plan_paper.yaml --load 75\n"
      "  sloserve plan infadapter experiments/infadapter/plan_paper.yaml \\\n"
      "      --loads 10,20,40,75,100,150 --set policy.beta=0.5 --json\n"
      "  sloserve plan infadapter experiments/infadapter/plan_paper.yaml --load 100 \\\n"
      "      --loaded resnet50:8,resnet101:3\n",
      FlagsHelp(kFlags).c_str());
}

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

StatusOr<std::vector<double>> ParseLoads(const Args& args) {
  if (args.Has("load") == args.Has("loads"))
    return InvalidArgumentError("give one of --load RPS or --loads A,B,...");
  std::vector<double> loads;
  const std::string flag = args.Has("load") ? "load" : "loads";
  for (const std::string& item : SplitCommas(args.Get(flag))) {
    ASSIGN_OR_RETURN(double rps, ParseFlagNumber(flag, item));
    if (rps < 0 || rps > 1e7)
      return InvalidArgumentError("--" + flag + ": a rate must be 0..1e7 rps, got " + item);
    loads.push_back(rps);
  }
  if (loads.empty()) return InvalidArgumentError("--" + flag + ": no rate given");
  return loads;
}

// "--loaded resnet50:8,resnet101:3" against the planner's variants.
StatusOr<std::map<VariantId, std::set<int>>> ParseLoaded(const std::string& text,
                                                         const InfAdapterCapacityModel& model,
                                                         int budget_cores) {
  std::map<VariantId, std::set<int>> loaded;
  for (const std::string& item : SplitCommas(text)) {
    const size_t colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return InvalidArgumentError("--loaded: expected VARIANT:CORES, got '" + item + "'");
    const std::string name = item.substr(0, colon);
    const InfAdapterVariantCapacity* variant = nullptr;
    std::string names;
    for (const InfAdapterVariantCapacity& v : model.variants) {
      if (v.name == name) variant = &v;
      names += (names.empty() ? "" : ", ") + v.name;
    }
    if (variant == nullptr) {
      return InvalidArgumentError("--loaded: '" + name + "' is not a variant of the task (" +
                                  names + ")");
    }
    ASSIGN_OR_RETURN(double cores, ParseFlagNumber("loaded", item.substr(colon + 1)));
    if (cores != std::floor(cores) || cores < 1 || cores > budget_cores) {
      return InvalidArgumentError("--loaded: " + name + "'s cores must be a whole number 1.." +
                                  std::to_string(budget_cores) + " (the budget), got '" +
                                  item.substr(colon + 1) + "'");
    }
    loaded[variant->variant].insert(static_cast<int>(cores));
  }
  return loaded;
}

// The run whose planning policy plans: --policy by name, else the first `infadapter`.
StatusOr<RunSpec> PickRun(const std::vector<RunSpec>& runs, const Args& args,
                          const std::string& path) {
  auto plans = [](const RunSpec& r) {
    return r.policy.planning == "infadapter" || r.policy.planning == "ms_plus" ||
           r.policy.planning == "vpa_plus";
  };
  std::string names;
  for (const RunSpec& r : runs) names += (names.empty() ? "" : ", ") + r.policy.Label();
  if (args.Has("policy")) {
    for (const RunSpec& r : runs) {
      if (r.policy.Label() != args.Get("policy")) continue;
      if (!plans(r)) {
        return InvalidArgumentError("--policy: '" + r.policy.Label() +
                                    "' does not plan with infadapter, ms_plus or vpa_plus");
      }
      return r;
    }
    return NotFoundError("--policy: no policy named '" + args.Get("policy") + "' in " + path +
                         " (policies: " + names + ")");
  }
  for (const RunSpec& r : runs)
    if (r.policy.planning == "infadapter") return r;
  return InvalidArgumentError(path + " has no policy with planning: infadapter (policies: " +
                              names + "); add one, or name an ms_plus/vpa_plus one with --policy");
}

struct PlanRow {
  double load_rps = 0;
  InfAdapterPlan plan;
};

nlohmann::json RowJson(const PlanRow& row, const InfAdapterCapacityModel& model) {
  nlohmann::json used = nlohmann::json::array();
  for (size_t m = 0; m < row.plan.allocations.size(); ++m) {
    const InfAdapterAllocation& a = row.plan.allocations[m];
    if (a.cores == 0) continue;
    used.push_back({{"variant", model.variants[m].name},
                    {"cores", a.cores},
                    {"capacity_rps", a.capacity_rps},
                    {"quota_rps", a.quota_rps}});
  }
  return {{"load_rps", row.load_rps},
          {"plan", used},
          {"objective", row.plan.objective},
          {"average_accuracy", row.plan.average_accuracy},
          {"total_cores", row.plan.total_cores},
          {"load_cost_s", row.plan.load_cost_s},
          {"shortfall_rps", row.plan.shortfall_rps},
          {"optimal", row.plan.optimal}};
}

std::string PlanText(const InfAdapterPlan& plan, const InfAdapterCapacityModel& model) {
  std::string out;
  char buf[160];
  for (size_t m = 0; m < plan.allocations.size(); ++m) {
    const InfAdapterAllocation& a = plan.allocations[m];
    if (a.cores == 0) continue;
    std::snprintf(buf, sizeof buf, "%s%s %d c %.1f/%.1f", out.empty() ? "" : "; ",
                  model.variants[m].name.c_str(), a.cores, a.quota_rps, a.capacity_rps);
    out += buf;
  }
  return out.empty() ? "(nothing)" : out;
}

Status Run(const Args& args) {
  if (args.positionals().size() != 1)
    return InvalidArgumentError("expected: CONFIG.yaml (see sloserve plan infadapter --help)");
  const std::string path = args.positionals()[0];
  ASSIGN_OR_RETURN(std::vector<double> loads, ParseLoads(args));
  ASSIGN_OR_RETURN(InfAdapterRule rule, ParseInfAdapterRule(args.Get("rule", "paper")));
  ASSIGN_OR_RETURN(ExperimentConfig config, LoadExperimentConfig(path));
  RETURN_IF_ERROR(ApplyOverrides(&config, args.GetAll("set")));
  if (!config.sweep.empty()) {
    return InvalidArgumentError("plan infadapter: the config sweeps '" + config.sweep[0].first +
                                "'; plan one setting at a time (--set " + config.sweep[0].first +
                                "=VALUE)");
  }
  ASSIGN_OR_RETURN(std::vector<RunSpec> runs, ExpandRuns(config));
  ASSIGN_OR_RETURN(RunSpec run, PickRun(runs, args, path));
  ASSIGN_OR_RETURN(ProfileSuite suite, LoadSuite(run.suite));
  ASSIGN_OR_RETURN(Deployment dep, ResolveDeployment(suite, DeploymentSpecOf(run)));
  ASSIGN_OR_RETURN(PolicySet policies, MakePolicySet(run.policy));
  auto* planner = dynamic_cast<InfAdapterPlanning*>(policies.planning.get());
  if (planner == nullptr) return InternalError("planning policy is not InfAdapter's");
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.task = dep.task;
  ctx.slo = dep.slo;
  RETURN_IF_ERROR(planner->Init(ctx).WithPrefix("planning policy " + run.policy.Label()));
  const InfAdapterCapacityModel& model = planner->capacity_model();
  const InfAdapterPlanning::Options& o = planner->options();
  ASSIGN_OR_RETURN(auto loaded, ParseLoaded(args.Get("loaded"), model, o.budget_cores));
  if (rule != InfAdapterRule::kPaper && run.policy.planning != "infadapter") {
    return InvalidArgumentError("--rule " + std::string(InfAdapterRuleName(rule)) +
                                ": only for an infadapter policy (the rule is Eq. 1's)");
  }

  std::vector<PlanRow> rows;
  for (double load : loads) {
    PlanRow row{load, {}};
    if (rule == InfAdapterRule::kPaper) {
      ASSIGN_OR_RETURN(row.plan, planner->PlanFor(load, loaded));
    } else {
      ASSIGN_OR_RETURN(InfAdapterProblem problem, planner->ProblemFor(load, loaded));
      ASSIGN_OR_RETURN(row.plan, SolveInfAdapterExhaustive(problem, 50'000'000, rule));
    }
    rows.push_back(std::move(row));
  }

  if (args.Has("json")) {
    if (args.Has("load")) {
      std::cout << RowJson(rows.front(), model).dump(2) << std::endl;
      return OkStatus();
    }
    nlohmann::json out = {{"policy", run.policy.Label()},     {"method", run.policy.planning},
                          {"rule", InfAdapterRuleName(rule)}, {"budget_cores", o.budget_cores},
                          {"min_cores", o.min_cores},         {"beta", o.weights.beta},
                          {"gamma", o.weights.gamma},         {"headroom", o.headroom},
                          {"slo_ms", ToMillis(dep.slo)},      {"rows", nlohmann::json::array()}};
    for (const PlanRow& row : rows) out["rows"].push_back(RowJson(row, model));
    std::cout << out.dump(2) << std::endl;
    return OkStatus();
  }
  std::printf(
      "%s plan (policy %s, rule %s): suite %s, task %s, SLO %.0f ms, budget %d cores, cores "
      "per variant %d..%d, headroom %.2f, beta %g, gamma %g; loaded: %s\n",
      run.policy.planning.c_str(), run.policy.Label().c_str(), InfAdapterRuleName(rule),
      suite.name().c_str(), suite.tasks()[dep.task].name.c_str(), ToMillis(dep.slo), o.budget_cores,
      o.min_cores, o.max_cores > 0 ? o.max_cores : o.budget_cores, o.headroom, o.weights.beta,
      o.weights.gamma, args.Has("loaded") ? args.Get("loaded").c_str() : "nothing");
  std::printf("%10s  %-64s %5s %8s %6s %10s %9s\n", "load_rps",
              "plan: variant cores quota/capacity", "cores", "AA_%", "LC_s", "objective",
              "shortfall");
  for (const PlanRow& row : rows) {
    std::printf("%10.1f  %-64s %5d %8.3f %6.2f %10.5f %9.1f%s\n", row.load_rps,
                PlanText(row.plan, model).c_str(), row.plan.total_cores, row.plan.average_accuracy,
                row.plan.load_cost_s, row.plan.objective, row.plan.shortfall_rps,
                row.plan.optimal ? "" : "  (time limit: not proven optimal)");
  }
  return OkStatus();
}

}  // namespace plan_infadapter_cmd

int PlanInfAdapterCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("plan infadapter", argv, plan_infadapter_cmd::kFlags,
                       plan_infadapter_cmd::PrintHelp, plan_infadapter_cmd::Run, 1);
}

}  // namespace sloserve::cli

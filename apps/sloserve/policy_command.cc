// `sloserve policy gen|show|set`: generate RAMSIS MDP policies (one load or a policy set
// across a load range, cached on disk), print one as a table, list a set.
// docs/ramsis-mdp.md.
#include <cstdio>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "progress_bar.h"
#include "sloserve/mdp/policy_io.h"
#include "sloserve/mdp/policy_set.h"
#include "sloserve/profile/profile.h"

namespace sloserve::cli {

// Named, not anonymous: the unity build compiles the commands in one batch.
namespace policy_cmd {

const std::vector<FlagSpec> kFlags = {
    {"suite", "NAME", "profile suite (embedded name or path; default ramsis-image)"},
    {"task", "NAME", "task (default: the suite's only task)"},
    {"hardware", "NAME", "hardware type (default: the suite's first)"},
    {"variants", "A,B,...", "variants to consider (default: all of the task)"},
    {"no-prune", "", "keep variants off the accuracy/latency Pareto front"},
    {"slo-ms", "MS", "latency SLO (default 150)"},
    {"workers", "K", "workers fed round-robin (default 60)"},
    {"load", "QPS", "generate one policy for this central-queue load"},
    {"min-qps", "QPS", "policy set: lowest load"},
    {"max-qps", "QPS", "policy set: highest load"},
    {"step", "FRACTION", "policy set: max accuracy gap between adjacent loads (default 0.01)"},
    {"arrival", "KIND", "poisson (default) or gamma"},
    {"cv", "X", "gamma inter-arrival coefficient of variation (default 1)"},
    {"discretization", "KIND", "fld (default) or md"},
    {"d", "D", "fld: levels are SLO/D apart (default 100)"},
    {"batching", "KIND", "maximal (default) or variable"},
    {"max-queue", "N", "worker queue bound (default 32)"},
    {"quantile", "Q", "action latency = this profile quantile (default 0.95)"},
    {"criterion", "NAME", "accuracy-per-query (default) or undiscounted-sweeps"},
    {"sweeps", "N", "undiscounted-sweeps: number of sweeps (default 100)"},
    {"threads", "N", "policy set: generation threads (default 2)"},
    {"cache-dir", "DIR", "policy-set cache (default $SLOSERVE_CACHE_DIR or ~/.cache/sloserve/mdp)"},
    {"out", "FILE", "also write the policy set file here"},
    {"load-of", "QPS", "show: the lowest-load policy covering QPS (default: the first)"},
    {"index", "I", "show: the I-th policy of the set"},
    {"columns", "N", "show: at most N slack columns (default 24)"},
    {"json", "", "print as JSON"},
    {"no-progress", "", "no progress bar"},
    {"help", "", "show this help"}};

void PrintHelp() {
  std::printf(
      "usage: sloserve policy gen [options]        generate (--load) or a set (--min/--max-qps)\n"
      "       sloserve policy show FILE [options]  print one policy of a set file as a table\n"
      "       sloserve policy set FILE [--json]    list the policies of a set file\n\n"
      "RAMSIS per-worker MDP policies (docs/ramsis-mdp.md): value iteration over (queued,\n"
      "slack) states for a worker fed round-robin from a central queue.\n\noptions:\n%s",
      FlagsHelp(kFlags).c_str());
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

StatusOr<mdp::MdpOptions> OptionsFromArgs(const Args& a) {
  mdp::MdpOptions o;
  o.task = a.Get("task");
  o.hardware = a.Get("hardware");
  o.variants = SplitComma(a.Get("variants"));
  o.pareto_prune = !a.Has("no-prune");
  ASSIGN_OR_RETURN(double slo_ms, a.GetDoubleIn("slo-ms", 150, {0, kMaxSloMillis, true, "ms"}));
  o.slo = MillisF(slo_ms);
  ASSIGN_OR_RETURN(int64_t workers, a.GetInt("workers", 60));
  o.workers = static_cast<int>(workers);
  ASSIGN_OR_RETURN(double cv, a.GetDouble("cv", 1.0));
  ASSIGN_OR_RETURN(o.arrival, mdp::ParseArrival(a.Get("arrival", "poisson"), cv));
  ASSIGN_OR_RETURN(int64_t d, a.GetInt("d", 100));
  ASSIGN_OR_RETURN(o.discretization,
                   mdp::ParseDiscretization(a.Get("discretization", "fld"), static_cast<int>(d)));
  ASSIGN_OR_RETURN(o.batching, mdp::ParseBatching(a.Get("batching", "maximal")));
  ASSIGN_OR_RETURN(int64_t mq, a.GetInt("max-queue", 32));
  o.max_queue = static_cast<int>(mq);
  ASSIGN_OR_RETURN(o.latency_quantile, a.GetDouble("quantile", 0.95));
  ASSIGN_OR_RETURN(o.solver.criterion,
                   mdp::ParseCriterion(a.Get("criterion", "accuracy-per-query")));
  ASSIGN_OR_RETURN(int64_t sweeps, a.GetInt("sweeps", 100));
  o.solver.fixed_sweeps = static_cast<int>(sweeps);
  return o;
}

nlohmann::json PolicyJson(const mdp::Policy& p) {
  const mdp::PolicyData& d = p.data();
  return {{"load_qps", d.load_qps},
          {"expected_accuracy", d.expected_accuracy},
          {"expected_violation", d.expected_violation},
          {"accuracy_per_query", d.accuracy_per_query},
          {"full_state_probability", d.full_state_probability},
          {"overloaded", d.overloaded},
          {"converged", d.converged},
          {"sweeps", d.sweeps}};
}

Status Gen(const Args& a) {
  ASSIGN_OR_RETURN(mdp::MdpOptions o, OptionsFromArgs(a));
  ASSIGN_OR_RETURN(ProfileSuite suite, LoadSuite(a.Get("suite", "ramsis-image")));
  const bool show = !a.Has("no-progress") && !a.Has("json") && StderrIsTerminal();
  std::vector<mdp::Policy> policies;
  std::string key, path;
  bool from_cache = false;
  if (a.Has("load")) {
    if (a.Has("min-qps") || a.Has("max-qps")) {
      return InvalidArgumentError("give either --load or --min-qps/--max-qps");
    }
    ASSIGN_OR_RETURN(o.load_qps, a.GetDouble("load", 0));
    ASSIGN_OR_RETURN(mdp::Policy p, mdp::GeneratePolicy(suite, o));
    key = p.data().key;
    policies.push_back(std::move(p));
  } else {
    if (!a.Has("min-qps") || !a.Has("max-qps")) {
      return InvalidArgumentError("give --load QPS, or --min-qps and --max-qps for a set");
    }
    mdp::PolicySetOptions set;
    ASSIGN_OR_RETURN(set.min_qps, a.GetDouble("min-qps", 0));
    ASSIGN_OR_RETURN(set.max_qps, a.GetDouble("max-qps", 0));
    ASSIGN_OR_RETURN(set.accuracy_step, a.GetDouble("step", 0.01));
    ASSIGN_OR_RETURN(int64_t threads, a.GetInt("threads", 2));
    set.threads = static_cast<int>(threads);
    ProgressBar bar("policy gen", show);
    auto progress = [&](int done, int, const mdp::Policy& last) {
      // The total is unknown until refinement ends; show done against a growing estimate.
      bar.Update(static_cast<double>(done) / (done + 1),
                 std::to_string(done) + " policies, last " +
                     std::to_string(static_cast<int>(last.load_qps())) + " qps");
    };
    const std::string dir = a.Get("cache-dir", mdp::DefaultPolicyCacheDir());
    ASSIGN_OR_RETURN(policies,
                     mdp::LoadOrGeneratePolicySet(suite, o, set, dir, progress, &from_cache));
    bar.Finish();
    ASSIGN_OR_RETURN(key, mdp::PolicySetKey(suite, o, set));
    path = mdp::PolicySetCachePath(dir, key);
  }
  if (a.Has("out")) {
    RETURN_IF_ERROR(mdp::SavePolicySet(a.Get("out"), key, policies));
    path = a.Get("out");
  }
  if (a.Has("json")) {
    nlohmann::json out = {{"key", key}, {"path", path}, {"from_cache", from_cache}};
    out["policies"] = nlohmann::json::array();
    for (const mdp::Policy& p : policies) out["policies"].push_back(PolicyJson(p));
    std::cout << out.dump(2) << std::endl;
    return OkStatus();
  }
  if (!path.empty()) std::printf("%s %s\n", from_cache ? "cached:" : "wrote:", path.c_str());
  for (const mdp::Policy& p : policies) std::printf("%s\n", mdp::SummarizePolicy(p).c_str());
  if (policies.size() == 1 && !policies[0].data().notes.empty()) {
    std::printf("%s", policies[0].data().notes.c_str());
  }
  return OkStatus();
}

Status Show(const Args& a, const std::string& file) {
  ASSIGN_OR_RETURN(std::vector<mdp::Policy> set, mdp::LoadPolicySet(file));
  if (set.empty()) return InvalidArgumentError(file + ": empty policy set");
  const mdp::Policy* p = &set.front();
  if (a.Has("load-of")) {
    ASSIGN_OR_RETURN(double qps, a.GetDouble("load-of", 0));
    p = mdp::SelectPolicy(set, qps);
    if (!p) return NotFoundError("no policy in " + file + " covers " + a.Get("load-of") + " qps");
  } else if (a.Has("index")) {
    ASSIGN_OR_RETURN(int64_t i, a.GetInt("index", 0));
    if (i < 0 || i >= static_cast<int64_t>(set.size())) {
      return OutOfRangeError("--index: the set has " + std::to_string(set.size()) + " policies");
    }
    p = &set[i];
  }
  if (a.Has("json")) {
    const mdp::PolicyData& d = p->data();
    nlohmann::json out = PolicyJson(*p);
    out["variants"] = d.variant_names;
    out["levels_us"] = d.levels_us;
    nlohmann::json rows = nlohmann::json::array();
    const size_t nl = d.levels_us.size();
    for (int n = 1; n <= d.max_queue; ++n) {
      nlohmann::json row = nlohmann::json::array();
      for (size_t j = 0; j < nl; ++j) {
        const mdp::Action& act = d.table[(n - 1) * nl + j];
        row.push_back({p->VariantName(act.variant), act.batch});
      }
      rows.push_back(row);
    }
    out["table"] = rows;
    out["full"] = {p->VariantName(d.full_action.variant), d.full_action.batch};
    std::cout << out.dump(2) << std::endl;
    return OkStatus();
  }
  ASSIGN_OR_RETURN(int64_t cols, a.GetInt("columns", 24));
  std::printf("%s",
              mdp::FormatPolicyTable(*p, static_cast<int>(std::max<int64_t>(cols, 1))).c_str());
  return OkStatus();
}

Status ListSet(const Args& a, const std::string& file) {
  std::string key;
  ASSIGN_OR_RETURN(std::vector<mdp::Policy> set, mdp::LoadPolicySet(file, &key));
  if (a.Has("json")) {
    nlohmann::json out = {{"key", key}, {"policies", nlohmann::json::array()}};
    for (const mdp::Policy& p : set) out["policies"].push_back(PolicyJson(p));
    std::cout << out.dump(2) << std::endl;
    return OkStatus();
  }
  std::printf("%s\n%zu policies\n", key.c_str(), set.size());
  for (size_t i = 0; i < set.size(); ++i) {
    std::printf("%3zu  %s\n", i, mdp::SummarizePolicy(set[i]).c_str());
  }
  return OkStatus();
}

Status Run(const Args& a) {
  const auto& pos = a.positionals();
  if (pos.empty()) return InvalidArgumentError("expected: policy gen|show|set (see --help)");
  if (pos[0] == "gen" && pos.size() == 1) return Gen(a);
  if (pos[0] == "show" && pos.size() == 2) return Show(a, pos[1]);
  if (pos[0] == "set" && pos.size() == 2) return ListSet(a, pos[1]);
  return InvalidArgumentError("expected: policy gen | policy show FILE | policy set FILE");
}

}  // namespace policy_cmd

int PolicyCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("policy", argv, policy_cmd::kFlags, policy_cmd::PrintHelp, policy_cmd::Run,
                       2);
}

}  // namespace sloserve::cli

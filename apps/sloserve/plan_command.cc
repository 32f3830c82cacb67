// `sloserve plan kairos CONFIG.yaml`: Kairos' configuration planning (HPDC'23, section
// 5.2). Enumerates every instance mix under a cost budget, ranks them by the throughput
// upper bound (Eqs. 9-15) and picks one by similarity among the top 10, with no
// evaluation; optionally simulates the top configurations, the whole space (the
// exhaustive optimum), and runs the online searches (Kairos+, random, genetic,
// annealing) counting evaluations to reach the optimum. docs/kairos-planning.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "progress_bar.h"
#include "search_flags.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/config/hardware_prices.h"
#include "sloserve/core/declared_key.h"
#include "sloserve/planner/config_search.h"
#include "sloserve/policy/latency_learning/latency_predictor.h"
#include "sloserve/policy/planning/kairos_config_pick.h"
#include "sloserve/policy/planning/kairos_upper_bound.h"
#include "sloserve/profile/profile.h"
#include "sloserve/sim/config_evaluator.h"
#include "sloserve/sim/heterogeneous_bounds.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace plan_cmd {

const std::vector<FlagSpec> kFlags = {
    {"set", "KEY=VALUE", "override a config key (as in sim)", true},
    {"budget", "USD_PER_HOUR", "cost budget (default: plan.budget_per_hour, else 2.5)"},
    {"max", "TYPE:N,...",
     "per-type maximum instance counts (default: plan.max_instances, else the budget's)"},
    {"top", "N", "configurations listed, and simulated with --evaluate top (default 20)"},
    {"size-sample", "N", "query sizes sampled for the bound (the monitor window; default 10000)"},
    {"oracle-queries", "N", "queries in the Oracle's sequence per listed config (default 20000)"},
    {"evaluate", "none|top|all",
     "simulate nothing (default), the top N, or every configuration (the exhaustive optimum)"},
    {"policy", "NAME", "only this policy of the config (by name); default: all of them"},
    {"search", "M1,M2", "online searches to run: kairos+, random, genetic, annealing"},
    {"seeds", "N", "seeds per randomised search (default 10)"},
    {"reach", "FRACTION",
     "an evaluation within this fraction of the optimum counts as reaching it (default 0.98, "
     "the throughput search's resolution)"},
    {"max-evals", "N", "evaluation limit of a search without a known optimum (default: none)"},
    {"cache", "DIR", "keep simulated values in DIR/<experiment>-<policy>.csv across runs"},
    {"start", "QPS", "first rate probed when no bound hint applies (default 10)"},
    {"tol", "FRACTION", "throughput search resolution (default 0.02)"},
    {"quantile", "Q", "QoS holds when at most 1-Q of queries miss it (default 0.99)"},
    {"jobs", "N", "simulations in parallel (default: hardware threads)"},
    {"json", "", "print JSON"},
    {"help", "", "show this help"},
};

void PrintHelp() {
  std::printf(
      "usage: sloserve plan kairos CONFIG.yaml [options]\n"
      "       sloserve plan infadapter CONFIG.yaml --load RPS [options]   (InfAdapter's Eq. 1:\n"
      "       variants, cores and quotas for a rate; sloserve plan infadapter --help)\n\n"
      "Kairos configuration planning: every mix of instance types within the cost budget\n"
      "(at least one base-type instance) is ranked by its throughput upper bound, computed\n"
      "from the latency profiles and a sample of the run's query sizes; Kairos picks one\n"
      "by similarity among the top 10 without evaluating anything. --evaluate simulates\n"
      "configurations (allowable throughput, as `sloserve kairos throughput`) under every\n"
      "policy of the config; --search runs Kairos+ and the search baselines and counts\n"
      "evaluations until they reach the exhaustive optimum. docs/kairos-planning.md.\n\n"
      "options:\n%s"
      "\nexamples:\n"
      "  sloserve plan kairos experiments/kairos/plan_rm2.yaml\n"
      "  sloserve plan kairos experiments/kairos/plan_rm2.yaml --evaluate all \\\n"
      "      --search kairos+,random,genetic,annealing --cache experiments/kairos/tables\n",
      FlagsHelp(kFlags).c_str());
}

// Command-line settings of one `plan kairos` invocation.
struct PlanOptions {
  double budget = 2.5;
  std::string max_counts;
  int64_t top_n = 20, size_sample = 10000, oracle_queries = 20000, seeds = 10, max_evals = 0;
  int64_t jobs = 1;
  double reach = 0.98;
  ThroughputSearchOptions search;
  std::string evaluate = "none";
  std::vector<std::string> methods;
  std::string cache_dir;
  bool show_progress = false;
};

// The evaluation-free part: the space, the bounds, the ranking and Kairos' pick.
struct BoundPlan {
  HeteroRunInfo info;
  ConfigSpace space;
  KairosUpperBound ub;
  std::vector<InstanceCounts> configs;
  std::vector<double> bounds;
  std::vector<RankedConfig> ranked;
  size_t pick = 0;
  size_t listed = 0;
  std::vector<double> oracle;  // Oracle bound of each listed configuration
  // The best homogeneous configuration: as many base instances as budget and maxima allow
  // (the paper scales its throughput up to the full budget; Kairos' slack is not).
  InstanceCounts homogeneous;
  double homogeneous_scale = 1;
  double bound_ms = 0;
};

struct SearchSummary {
  std::string method;
  std::vector<size_t> to_reach;  // per seed; 0 = never reached
  std::vector<size_t> evaluations;
  std::vector<double> best;
  std::vector<int64_t> pruned;
};

// The simulated part, per policy of the config.
struct PolicyPlan {
  std::string policy;
  std::vector<double> top_allowable;  // parallel to the listed top (NaN: not evaluated)
  double pick_allowable = NAN;
  double homogeneous_qps = NAN;  // the base-only configuration (Fig. 8's comparison)
  bool exhaustive = false;
  InstanceCounts optimum;
  double optimum_qps = NAN;
  size_t simulated = 0;
  std::vector<SearchSummary> searches;
};

// Median of the runs that reached the target (0 = never reached, left out).
double Median(std::vector<size_t> v) {
  std::erase(v, size_t{0});
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? static_cast<double>(v[n / 2]) : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string FileSafe(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  return s;
}

StatusOr<PlanOptions> ParsePlanOptions(const Args& args, const ExperimentConfig& config) {
  PlanOptions o;
  ASSIGN_OR_RETURN(const double default_budget, NumberOf(config.base, kPlanBudgetKey));
  ASSIGN_OR_RETURN(o.budget, args.GetDouble("budget", default_budget));
  o.max_counts = args.Has("max") ? args.Get("max") : TextOf(config.base, kPlanMaxInstancesKey);
  ASSIGN_OR_RETURN(o.top_n, args.GetInt("top", 20));
  ASSIGN_OR_RETURN(o.size_sample, args.GetInt("size-sample", 10000));
  ASSIGN_OR_RETURN(o.oracle_queries, args.GetInt("oracle-queries", 20000));
  ASSIGN_OR_RETURN(o.seeds, args.GetInt("seeds", 10));
  ASSIGN_OR_RETURN(o.reach, args.GetDouble("reach", 0.98));
  ASSIGN_OR_RETURN(o.max_evals, args.GetInt("max-evals", 0));
  ASSIGN_OR_RETURN(
      o.jobs, args.GetIntIn("jobs", std::max(1u, std::thread::hardware_concurrency()), kJobsRange));
  ASSIGN_OR_RETURN(o.search, ParseThroughputSearchFlags(args));
  o.evaluate = args.Get("evaluate", "none");
  o.methods = SplitList(args.Get("search", ""));
  if (o.top_n < 1) return InvalidArgumentError("--top: must be >= 1");
  if (o.seeds < 1) return InvalidArgumentError("--seeds: must be >= 1");
  if (o.oracle_queries < 1) return InvalidArgumentError("--oracle-queries: must be >= 1");
  if (!(o.reach > 0 && o.reach <= 1)) return InvalidArgumentError("--reach: must be in (0, 1]");
  if (o.evaluate != "none" && o.evaluate != "top" && o.evaluate != "all")
    return InvalidArgumentError("--evaluate: expected none, top or all (got '" + o.evaluate + "')");
  for (const std::string& m : o.methods) {
    const auto& known = ConfigSearchMethods();
    if (std::find(known.begin(), known.end(), m) == known.end())
      return InvalidArgumentError("--search: unknown method '" + m +
                                  "' (kairos+, random, genetic, annealing)");
    if (m != "kairos+" && o.evaluate != "all" && o.max_evals == 0)
      return InvalidArgumentError("--search " + m +
                                  ": needs --evaluate all (to know the optimum) or --max-evals");
  }
  o.cache_dir = args.Get("cache", "");
  if (!o.cache_dir.empty()) {
    // Made (or found unusable) before any simulation: a cache written only at the end
    // lost every simulated value when its directory was missing.
    std::error_code ec;
    std::filesystem::create_directories(o.cache_dir, ec);
    if (ec || !std::filesystem::is_directory(o.cache_dir)) {
      return InvalidArgumentError("--cache: cannot make directory '" + o.cache_dir +
                                  "': " + (ec ? ec.message() : "a file is there"));
    }
  }
  o.show_progress = StderrIsTerminal() && !args.Has("json");
  return o;
}

StatusOr<BoundPlan> RankConfigurations(const RunSpec& first, const ProfileSuite& suite,
                                       const PlanOptions& o) {
  const double budget = o.budget;
  ASSIGN_OR_RETURN(HeteroRunInfo info, ResolveHeteroRun(first, suite));
  ASSIGN_OR_RETURN(ConfigSpace space, MakeConfigSpace(suite, budget, o.max_counts));
  ASSIGN_OR_RETURN(std::vector<int> sizes,
                   SampleQuerySizes(first, o.size_sample, "kairos/plan-sizes"));
  LatencyPredictor predictor;
  RETURN_IF_ERROR(predictor.Init(suite, first.seed));
  const auto t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(KairosUpperBound ub,
                   KairosUpperBound::Create(predictor, suite, info.variant, info.qos, sizes));
  const HardwareId base = ub.base();
  const std::string& base_name = suite.hardware()[base].name;
  if (ub.unservable_fraction() > 1 - o.search.quantile) {
    char m[256];
    std::snprintf(m, sizeof m,
                  "QoS %.1f ms is unattainable: %.1f%% of sampled query sizes (from %d rows) "
                  "exceed it even on %s, the fastest type, more than the %.1f%% allowed",
                  ToMillis(info.qos), 100 * ub.unservable_fraction(), ub.smallest_unservable_size(),
                  base_name.c_str(), 100 * (1 - o.search.quantile));
    return InvalidArgumentError(m);
  }
  space.min_count[base] = 1;  // as the Kairos artifact: only the base serves every size
  if (space.max_count[base] < 1) {
    return InvalidArgumentError("budget " + std::to_string(budget) +
                                " $/h (or --max) leaves no room for one " + base_name +
                                ", the base type");
  }
  std::vector<InstanceCounts> configs = EnumerateConfigs(space);
  std::vector<double> bounds(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) bounds[i] = ub.Bound(configs[i]);
  std::vector<RankedConfig> ranked = RankByBound(space, configs, bounds);
  const size_t pick = SimilarityPick(ranked, base);
  const double bound_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (ub.unservable_fraction() > 0) {
    std::fprintf(stderr,
                 "sloserve plan: warning: %.2f%% of sampled query sizes (from %d rows) miss QoS "
                 "on every type; they are left out of the bound\n",
                 100 * ub.unservable_fraction(), ub.smallest_unservable_size());
  }
  const size_t listed = std::min<size_t>(static_cast<size_t>(o.top_n), ranked.size());
  InstanceCounts homogeneous(space.price.size(), 0);
  homogeneous[base] = std::min(space.max_count[base],
                               static_cast<int>(std::floor(budget / space.price[base] + 1e-9)));
  const double homogeneous_scale = budget / space.Cost(homogeneous);
  std::vector<double> oracle(listed);
  for (size_t i = 0; i < listed; ++i) {
    InstanceMix mix;
    for (size_t t = 0; t < ranked[i].counts.size(); ++t)
      if (ranked[i].counts[t] > 0) mix.emplace_back(t, ranked[i].counts[t]);
    ASSIGN_OR_RETURN(oracle[i], OracleBoundForMix(first, suite, mix, o.oracle_queries));
  }
  return BoundPlan{std::move(info),
                   std::move(space),
                   std::move(ub),
                   std::move(configs),
                   std::move(bounds),
                   std::move(ranked),
                   pick,
                   listed,
                   std::move(oracle),
                   std::move(homogeneous),
                   homogeneous_scale,
                   bound_ms};
}

StatusOr<PolicyPlan> EvaluatePolicy(const RunSpec& run, const ProfileSuite& suite,
                                    const std::string& experiment, const BoundPlan& b,
                                    const PlanOptions& o) {
  PolicyPlan plan;
  plan.policy = run.policy.Label();
  std::map<InstanceCounts, double> bound_of;
  for (size_t i = 0; i < b.configs.size(); ++i) bound_of[b.configs[i]] = b.bounds[i];
  // Start each throughput search near half the bound: fewer doubling probes.
  SimulatedConfigEvaluator evaluator(run, suite, b.space, o.search, [&](const InstanceCounts& c) {
    auto it = bound_of.find(c);
    return it == bound_of.end() ? 0.0 : 0.5 * it->second;
  });
  std::string cache_path;
  if (!o.cache_dir.empty()) {
    cache_path = o.cache_dir + "/" + FileSafe(experiment.empty() ? "plan" : experiment) + "-" +
                 FileSafe(plan.policy) + ".csv";
    RETURN_IF_ERROR(evaluator.LoadCache(cache_path));
  }
  auto evaluate_all = [&](const std::vector<InstanceCounts>& list, const std::string& what) {
    ProgressBar bar("plan " + plan.policy + " " + what, o.show_progress);
    return evaluator.EvaluateAll(list, static_cast<int>(o.jobs), [&](size_t d, size_t n) {
      bar.Update(static_cast<double>(d) / n, std::to_string(d) + "/" + std::to_string(n));
    });
  };
  if (o.evaluate == "top") {
    std::vector<InstanceCounts> list;
    for (size_t i = 0; i < b.listed; ++i) list.push_back(b.ranked[i].counts);
    list.push_back(b.ranked[b.pick].counts);
    list.push_back(b.homogeneous);
    RETURN_IF_ERROR(evaluate_all(list, "top"));
  } else if (o.evaluate == "all") {
    RETURN_IF_ERROR(evaluate_all(b.configs, "all"));
    plan.exhaustive = true;
    for (const auto& [c, v] : evaluator.cache()) {
      if (std::isnan(plan.optimum_qps) || v > plan.optimum_qps) {
        plan.optimum_qps = v;
        plan.optimum = c;
      }
    }
  }
  if (o.evaluate != "none") {
    const auto cache = evaluator.cache();
    for (size_t i = 0; i < b.listed; ++i) {
      auto it = cache.find(b.ranked[i].counts);
      plan.top_allowable.push_back(it == cache.end() ? NAN : it->second);
    }
    plan.pick_allowable = cache.at(b.ranked[b.pick].counts);
    plan.homogeneous_qps = cache.at(b.homogeneous);
  }
  for (const std::string& m : o.methods) {
    SearchSummary summary;
    summary.method = m;
    const int64_t n_seeds = m == "kairos+" ? 1 : o.seeds;  // Kairos+ is deterministic
    for (int64_t seed = 1; seed <= n_seeds; ++seed) {
      SearchOptions so;
      so.seed = static_cast<uint64_t>(seed);
      so.max_evaluations = o.max_evals;
      ASSIGN_OR_RETURN(SearchResult r,
                       RunConfigSearch(
                           m, b.space, b.configs, b.bounds,
                           [&](const InstanceCounts& c) { return evaluator.Evaluate(c); }, so));
      summary.to_reach.push_back(plan.exhaustive ? r.EvaluationsToReach(o.reach * plan.optimum_qps)
                                                 : 0);
      summary.evaluations.push_back(r.evaluations.size());
      summary.best.push_back(r.best_value);
      summary.pruned.push_back(r.pruned);
    }
    plan.searches.push_back(std::move(summary));
  }
  plan.simulated = evaluator.simulated();
  if (!cache_path.empty()) RETURN_IF_ERROR(evaluator.SaveCache(cache_path));
  return plan;
}

nlohmann::json PlanJson(const std::string& experiment, const ProfileSuite& suite,
                        const BoundPlan& b, const std::vector<PolicyPlan>& plans,
                        const PlanOptions& o) {
  nlohmann::json types = nlohmann::json::array();
  for (const auto& t : b.ub.types()) {
    types.push_back({{"hardware", suite.hardware()[t.hardware].name},
                     {"base", t.base},
                     {"violation_size", t.violation_size},
                     {"small_fraction", t.small_fraction},
                     {"qps_small", t.qps_small},
                     {"qps_all", t.qps_all}});
  }
  nlohmann::json top = nlohmann::json::array();
  for (size_t i = 0; i < b.listed; ++i) {
    nlohmann::json row = {{"rank", i + 1},
                          {"counts", b.ranked[i].counts},
                          {"hardware", FormatMix(b.space, b.ranked[i].counts)},
                          {"cost_per_hour", b.space.Cost(b.ranked[i].counts)},
                          {"upper_bound_qps", b.ranked[i].bound},
                          {"oracle_qps", b.oracle[i]},
                          {"pick", i == b.pick}};
    nlohmann::json allowable = nlohmann::json::object();
    for (const PolicyPlan& p : plans)
      if (i < p.top_allowable.size() && !std::isnan(p.top_allowable[i]))
        allowable[p.policy] = p.top_allowable[i];
    row["allowable_qps"] = allowable;
    top.push_back(row);
  }
  // Long-format rows for `sloserve report --x rank --y qps --series series` (Figs.
  // 13-14: bound, Oracle and simulated throughput of the top configurations).
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < b.listed; ++i) {
    auto add = [&](const std::string& series, double qps) {
      rows.push_back({{"rank", i + 1},
                      {"hardware", FormatMix(b.space, b.ranked[i].counts)},
                      {"series", series},
                      {"qps", qps}});
    };
    add("upper bound", b.ranked[i].bound);
    add("oracle", b.oracle[i]);
    for (const PolicyPlan& p : plans)
      if (i < p.top_allowable.size() && !std::isnan(p.top_allowable[i]))
        add(p.policy, p.top_allowable[i]);
  }
  nlohmann::json pol = nlohmann::json::array();
  for (const PolicyPlan& p : plans) {
    nlohmann::json j = {{"policy", p.policy}, {"simulated_configs", p.simulated}};
    if (!std::isnan(p.pick_allowable)) {
      j["pick_allowable_qps"] = p.pick_allowable;
      j["homogeneous"] = {{"counts", b.homogeneous},
                          {"hardware", FormatMix(b.space, b.homogeneous)},
                          {"cost_per_hour", b.space.Cost(b.homogeneous)},
                          {"allowable_qps", p.homogeneous_qps},
                          {"scaled_qps", p.homogeneous_qps * b.homogeneous_scale}};
      j["pick_over_homogeneous"] = p.pick_allowable / (p.homogeneous_qps * b.homogeneous_scale);
    }
    if (p.exhaustive) {
      j["optimum"] = {{"counts", p.optimum},
                      {"hardware", FormatMix(b.space, p.optimum)},
                      {"allowable_qps", p.optimum_qps},
                      {"upper_bound_qps", b.ub.Bound(p.optimum)}};
    }
    nlohmann::json searches = nlohmann::json::array();
    for (const SearchSummary& s : p.searches) {
      nlohmann::json sj = {{"method", s.method},
                           {"evaluations", s.evaluations},
                           {"best_qps", s.best},
                           {"pruned", s.pruned}};
      if (p.exhaustive) {
        sj["evaluations_to_reach"] = s.to_reach;
        sj["median_to_reach"] = Median(s.to_reach);
      }
      searches.push_back(sj);
    }
    j["searches"] = searches;
    pol.push_back(j);
  }
  nlohmann::json out = {{"experiment", experiment},
                        {"task", suite.tasks()[b.info.task].name},
                        {"qos_ms", ToMillis(b.info.qos)},
                        {"budget_per_hour", o.budget},
                        {"base", suite.hardware()[b.ub.base()].name},
                        {"configurations", b.configs.size()},
                        {"bound_time_ms", b.bound_ms},
                        {"unservable_fraction", b.ub.unservable_fraction()},
                        {"types", types},
                        {"top", top},
                        {"pick",
                         {{"rank", b.pick + 1},
                          {"counts", b.ranked[b.pick].counts},
                          {"hardware", FormatMix(b.space, b.ranked[b.pick].counts)},
                          {"upper_bound_qps", b.ranked[b.pick].bound}}},
                        {"reach", o.reach},
                        {"policies", pol},
                        {"rows", rows}};
  return out;
}

void PrintPlan(const ProfileSuite& suite, const BoundPlan& b, const std::vector<PolicyPlan>& plans,
               const PlanOptions& o) {
  std::printf(
      "kairos plan: task %s, QoS %.1f ms, budget %.3f $/h, %zu configurations with >= 1 "
      "%s (bounds in %.2f ms)\n",
      suite.tasks()[b.info.task].name.c_str(), ToMillis(b.info.qos), o.budget, b.configs.size(),
      suite.hardware()[b.ub.base()].name.c_str(), b.bound_ms);
  std::printf("%-14s %5s %10s %10s %10s\n", "type", "base", "vio_size", "small_frac", "qps_small");
  for (const auto& t : b.ub.types()) {
    std::printf("%-14s %5s %10d %10.3f %10.2f\n", suite.hardware()[t.hardware].name.c_str(),
                t.base ? "yes" : "", t.violation_size, t.small_fraction,
                t.base ? t.qps_all : t.qps_small);
  }
  std::printf("\n%4s %-14s %-52s %6s %11s %10s", "rank", "counts", "hardware", "$/h", "upper_bound",
              "oracle");
  for (const PolicyPlan& p : plans)
    if (!p.top_allowable.empty()) std::printf(" %12s", p.policy.substr(0, 12).c_str());
  std::printf("\n");
  for (size_t i = 0; i < b.listed; ++i) {
    std::printf("%4zu %-14s %-52s %6.3f %11.1f %10.1f", i + 1,
                FormatCounts(b.ranked[i].counts).c_str(),
                FormatMix(b.space, b.ranked[i].counts).c_str(), b.space.Cost(b.ranked[i].counts),
                b.ranked[i].bound, b.oracle[i]);
    for (const PolicyPlan& p : plans)
      if (!p.top_allowable.empty()) std::printf(" %12.1f", p.top_allowable[i]);
    std::printf("%s\n", i == b.pick ? "  <- Kairos pick" : "");
  }
  if (b.pick >= b.listed) {
    std::printf("Kairos pick: rank %zu %s (bound %.1f)\n", b.pick + 1,
                FormatMix(b.space, b.ranked[b.pick].counts).c_str(), b.ranked[b.pick].bound);
  }
  for (const PolicyPlan& p : plans) {
    if (std::isnan(p.pick_allowable) && p.searches.empty()) continue;
    std::printf("\npolicy %s (%zu configurations simulated):\n", p.policy.c_str(), p.simulated);
    if (!std::isnan(p.pick_allowable)) {
      std::printf("  Kairos pick %s: allowable %.1f qps\n",
                  FormatMix(b.space, b.ranked[b.pick].counts).c_str(), p.pick_allowable);
      std::printf(
          "  homogeneous %s (%.3f $/h): %.1f qps, scaled to the budget %.1f; pick / "
          "scaled = %.2fx\n",
          FormatMix(b.space, b.homogeneous).c_str(), b.space.Cost(b.homogeneous), p.homogeneous_qps,
          p.homogeneous_qps * b.homogeneous_scale,
          p.pick_allowable / (p.homogeneous_qps * b.homogeneous_scale));
    }
    if (p.exhaustive) {
      std::printf("  exhaustive optimum %s: %.1f qps (pick reaches %.1f%%)\n",
                  FormatMix(b.space, p.optimum).c_str(), p.optimum_qps,
                  100 * p.pick_allowable / p.optimum_qps);
    }
    for (const SearchSummary& s : p.searches) {
      if (p.exhaustive) {
        size_t never = std::count(s.to_reach.begin(), s.to_reach.end(), size_t{0});
        std::printf(
            "  %-10s evaluations to reach %.0f%% of the optimum: median %.1f (%.1f%% of "
            "the space), over %zu seed(s)%s; the search ended after %.1f\n",
            s.method.c_str(), 100 * o.reach, Median(s.to_reach),
            100 * Median(s.to_reach) / b.configs.size(), s.to_reach.size(),
            never ? (", " + std::to_string(never) + " never did").c_str() : "",
            Median(s.evaluations));
      } else {
        std::printf("  %-10s best %.1f qps after %zu evaluations (%lld pruned)\n", s.method.c_str(),
                    s.best[0], s.evaluations[0], static_cast<long long>(s.pruned[0]));
      }
    }
  }
}

Status Run(const Args& args) {
  if (args.positionals().size() != 2 || args.positionals()[0] != "kairos") {
    return InvalidArgumentError(
        "expected: kairos CONFIG.yaml or infadapter CONFIG.yaml (see sloserve plan --help)");
  }
  ASSIGN_OR_RETURN(ExperimentConfig config, LoadExperimentConfig(args.positionals()[1]));
  RETURN_IF_ERROR(ApplyOverrides(&config, args.GetAll("set")));
  if (!config.sweep.empty()) {
    return InvalidArgumentError("plan: the config sweeps '" + config.sweep[0].first +
                                "'; planning chooses the hardware itself (use policies: to "
                                "compare dispatchers)");
  }
  ASSIGN_OR_RETURN(std::vector<RunSpec> runs, ExpandRuns(config));
  if (args.Has("policy")) {
    const std::string want = args.Get("policy");
    std::erase_if(runs, [&](const RunSpec& r) { return r.policy.Label() != want; });
    if (runs.empty())
      return NotFoundError("--policy: no policy named '" + want + "' in the config");
  }
  const RunSpec& first = runs.front();
  ASSIGN_OR_RETURN(ProfileSuite suite, LoadSuite(first.suite));
  // The budget is in $/h: a config's stated prices are the ones it ranks mixes by.
  RETURN_IF_ERROR(ApplyHardwarePrices(first.hardware_prices, {&suite}));

  ASSIGN_OR_RETURN(PlanOptions o, ParsePlanOptions(args, config));
  for (const RunSpec& r : runs) {
    if (r.suite != first.suite || r.task != first.task || r.sizes != first.sizes ||
        r.hardware_prices != first.hardware_prices)
      return InvalidArgumentError(
          "plan: every policy must share the suite, task, sizes and hardware_prices");
  }
  ASSIGN_OR_RETURN(BoundPlan b, RankConfigurations(first, suite, o));
  std::vector<PolicyPlan> plans;
  for (const RunSpec& run : runs) {
    ASSIGN_OR_RETURN(PolicyPlan p, EvaluatePolicy(run, suite, config.name, b, o));
    plans.push_back(std::move(p));
  }
  if (args.Has("json")) {
    std::cout << PlanJson(config.name, suite, b, plans, o).dump(2) << std::endl;
  } else {
    PrintPlan(suite, b, plans, o);
  }
  return OkStatus();
}

}  // namespace plan_cmd

int PlanCommand(const std::vector<std::string>& argv) {
  if (!argv.empty() && argv[0] == "infadapter")
    return PlanInfAdapterCommand(std::vector<std::string>(argv.begin() + 1, argv.end()));
  return RunSubcommand("plan", argv, plan_cmd::kFlags, plan_cmd::PrintHelp, plan_cmd::Run, 2);
}

}  // namespace sloserve::cli

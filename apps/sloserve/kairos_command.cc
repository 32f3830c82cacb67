// `sloserve kairos throughput CONFIG.yaml`: the allowable throughput (Kairos, HPDC'23,
// section 7 "Metrics") of every run of an experiment config, with the Oracle bound of
// its configuration, and optional hill climbing of one integer policy option (DRS'
// threshold). docs/kairos.md.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "search_flags.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/core/declared_key.h"
#include "sloserve/core/did_you_mean.h"
#include "sloserve/policy/registry.h"
#include "sloserve/profile/profile.h"
#include "sloserve/sim/allowable_throughput.h"
#include "sloserve/sim/heterogeneous_bounds.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace kairos_cmd {

const std::vector<FlagSpec> kFlags = {
    {"set", "KEY=VALUE", "override a config key (as in sim)", true},
    {"start", "QPS", "first rate probed (default 10)"},
    {"tol", "FRACTION", "stop bisecting when the bracket is within this (default 0.02)"},
    {"quantile", "Q", "QoS holds when at most 1-Q of queries miss it (default 0.99)"},
    {"tune", "OPTION=LO:HI:STEP[:START]",
     "hill-climb an integer policy option, in the runs whose policy sets it"},
    {"oracle-queries", "N", "queries in the Oracle's sequence (default 20000)"},
    {"jobs", "N", "runs searched in parallel (default: hardware threads)"},
    {"json", "", "print JSON"},
    {"help", "", "show this help"},
};

void PrintHelp() {
  std::printf(
      "usage: sloserve kairos throughput CONFIG.yaml [options]\n\n"
      "For every run of the experiment (policies x sweeps), finds the highest Poisson rate\n"
      "at which at most 1%% of queries miss their QoS (p99 within QoS): doubling from\n"
      "--start, then bisection; each probe is one seeded simulation. Also prints the\n"
      "Oracle bound (Kairos section 7) of the run's instance mix. docs/kairos.md.\n\n"
      "options:\n%s"
      "\nexample: sloserve kairos throughput experiments/kairos/rm2_dispatch.yaml\n",
      FlagsHelp(kFlags).c_str());
}

struct Tune {
  std::string option;
  int64_t lo = 0, hi = 0, step = 0, start = 0;
};

StatusOr<Tune> ParseTune(const std::string& s) {
  Tune t;
  const size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    return InvalidArgumentError("--tune: expected OPTION=LO:HI:STEP[:START]");
  t.option = s.substr(0, eq);
  std::vector<int64_t> v;
  std::stringstream ss(s.substr(eq + 1));
  for (std::string item; std::getline(ss, item, ':');) {
    const std::optional<int64_t> x = ParseInteger(item);
    if (!x) return InvalidArgumentError("--tune: '" + item + "' is not an integer");
    v.push_back(*x);
  }
  if (v.size() != 3 && v.size() != 4)
    return InvalidArgumentError("--tune: expected OPTION=LO:HI:STEP[:START]");
  t.lo = v[0];
  t.hi = v[1];
  t.step = v[2];
  t.start = v.size() == 4 ? v[3] : (v[0] + v[1]) / 2;
  return t;
}

// An option no run's policy takes (a typo) would tune nothing and go unnoticed: refused,
// naming the options the experiment's policies do take.
Status CheckTuneOption(const Tune& tune, const std::vector<RunSpec>& runs) {
  std::vector<std::string> known;
  for (const RunSpec& run : runs) {
    for (const KeyDecl& k : PolicyRegistry::Builtin().OptionsOf(run.policy)) {
      if (std::find(known.begin(), known.end(), k.name) == known.end()) known.push_back(k.name);
    }
  }
  if (std::find(known.begin(), known.end(), tune.option) != known.end()) return OkStatus();
  return InvalidArgumentError(
      "--tune: option '" + tune.option + "' is not taken by the experiment's policies (" +
      DidYouMean(tune.option, known) +
      (known.empty() ? std::string("they take no options") : "their options: " + JoinNames(known)) +
      ")");
}

struct Row {
  std::string policy, hardware, tuned;
  double cost = 0, allowable = 0, oracle = 0, slo_ms = 0;
  int probes = 0;
  std::vector<std::pair<int64_t, double>> tune_curve;
  std::vector<ThroughputProbe> trace;
};

StatusOr<Row> SearchOne(const RunSpec& run, const ProfileSuite& suite,
                        const ThroughputSearchOptions& o, const std::optional<Tune>& tune,
                        int64_t oracle_queries) {
  Row row;
  row.policy = run.policy.Label();
  row.hardware = run.hardware;
  ASSIGN_OR_RETURN(InstanceMix mix, ParseInstanceMix(run, suite));
  for (const auto& [hw, count] : mix) row.cost += suite.hardware()[hw].price_per_hour * count;
  ASSIGN_OR_RETURN(HeteroRunInfo info, ResolveHeteroRun(run, suite));
  const Duration slo = info.qos;
  row.slo_ms = ToMillis(slo);
  if (tune && run.policy.options.count(tune->option)) {
    ASSIGN_OR_RETURN(HillClimbResult h, HillClimbOption(run, suite, o, tune->option, tune->lo,
                                                        tune->hi, tune->step, tune->start));
    row.allowable = h.best.allowable_qps;
    row.trace = h.best.probes;
    row.tuned = tune->option + "=" + std::to_string(h.best_value);
    row.tune_curve = h.evaluated;
  } else {
    ASSIGN_OR_RETURN(ThroughputSearchResult r, FindAllowableThroughput(run, suite, o));
    row.allowable = r.allowable_qps;
    row.trace = r.probes;
  }
  row.probes = static_cast<int>(row.trace.size());
  // Oracle bound of this mix: profile means, sizes from the run's size distribution.
  ASSIGN_OR_RETURN(row.oracle, OracleBoundForMix(run, suite, mix, oracle_queries));
  return row;
}

Status Run(const Args& args) {
  if (args.positionals().size() != 2 || args.positionals()[0] != "throughput") {
    return InvalidArgumentError("expected: throughput CONFIG.yaml (see sloserve kairos --help)");
  }
  ASSIGN_OR_RETURN(ExperimentConfig config, LoadExperimentConfig(args.positionals()[1]));
  RETURN_IF_ERROR(ApplyOverrides(&config, args.GetAll("set")));
  ASSIGN_OR_RETURN(std::vector<RunSpec> runs, ExpandRuns(config));
  ASSIGN_OR_RETURN(const ThroughputSearchOptions o, ParseThroughputSearchFlags(args));
  ASSIGN_OR_RETURN(int64_t oracle_queries, args.GetInt("oracle-queries", 20000));
  if (oracle_queries < 1) return InvalidArgumentError("--oracle-queries: must be >= 1");
  std::optional<Tune> tune;
  if (args.Has("tune")) {
    ASSIGN_OR_RETURN(Tune t, ParseTune(args.Get("tune")));
    RETURN_IF_ERROR(CheckTuneOption(t, runs));
    tune = t;
  }
  ASSIGN_OR_RETURN(
      int64_t jobs,
      args.GetIntIn("jobs", std::max(1u, std::thread::hardware_concurrency()), kJobsRange));
  std::map<std::string, ProfileSuite> suites;
  for (const RunSpec& r : runs) {
    if (!suites.count(r.suite)) {
      ASSIGN_OR_RETURN(ProfileSuite s, LoadSuite(r.suite));
      suites.emplace(r.suite, std::move(s));
    }
  }
  std::vector<StatusOr<Row>> rows(runs.size(), StatusOr<Row>(InternalError("not run")));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < runs.size(); i = next++) {
      // A policy only valid with some option values fails here with its message.
      rows[i] = SearchOne(runs[i], suites.at(runs[i].suite), o, tune, oracle_queries);
    }
  };
  std::vector<std::thread> threads;
  for (int64_t k = 0; k < std::min<int64_t>(jobs, static_cast<int64_t>(runs.size())); ++k) {
    threads.emplace_back(worker);
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].ok()) return rows[i].status().WithPrefix("run " + std::to_string(i + 1));
  }
  if (args.Has("json")) {
    nlohmann::json out = {{"experiment", config.name}, {"rows", nlohmann::json::array()}};
    for (const auto& r : rows) {
      nlohmann::json probes = nlohmann::json::array();
      for (const ThroughputProbe& p : r->trace) {
        probes.push_back({{"qps", p.qps},
                          {"ok", p.ok},
                          {"violation_rate", p.violation_rate},
                          {"p99_ms", p.p99_ms}});
      }
      nlohmann::json j = {
          {"policy", r->policy}, {"hardware", r->hardware},       {"cost_per_hour", r->cost},
          {"slo_ms", r->slo_ms}, {"allowable_qps", r->allowable}, {"oracle_qps", r->oracle},
          {"probes", probes}};
      if (!r->tuned.empty()) {
        j["tuned"] = r->tuned;
        nlohmann::json curve = nlohmann::json::array();
        for (const auto& [v, q] : r->tune_curve)
          curve.push_back({{"value", v}, {"allowable_qps", q}});
        j["tune_curve"] = curve;
      }
      out["rows"].push_back(j);
    }
    std::cout << out.dump(2) << std::endl;
    return OkStatus();
  }
  if (!config.name.empty()) std::cout << config.name << "\n";
  std::printf("%-14s %-44s %6s %7s %13s %10s %6s %s\n", "policy", "hardware", "$/h", "slo_ms",
              "allowable_qps", "oracle_qps", "probes", tune ? "tuned" : "");
  for (const auto& r : rows) {
    std::printf("%-14s %-44s %6.3f %7.1f %13.1f %10.1f %6d %s\n", r->policy.c_str(),
                r->hardware.c_str(), r->cost, r->slo_ms, r->allowable, r->oracle, r->probes,
                r->tuned.c_str());
  }
  return OkStatus();
}

}  // namespace kairos_cmd

int KairosCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("kairos", argv, kairos_cmd::kFlags, kairos_cmd::PrintHelp, kairos_cmd::Run,
                       2);
}

}  // namespace sloserve::cli

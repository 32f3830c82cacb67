// `sloserve demo`: the main job on embedded defaults. Serves RAMSIS model selection on
// 127.0.0.1, drives it through a load ramp with the load generator, then serves the same
// ramp with one fixed variant, and prints per load step what each answered with:
// accuracy, SLO attainment, p99 and the variant mix. The reader sees variants switch as
// load rises and what that buys over a variant provisioned for the peak.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli_args.h"
#include "commands.h"
#include "load_schedule.h"
#include "progress_bar.h"
#include "serve_setup.h"
#include "sloserve/core/declared_key.h"
#include "sloserve/core/did_you_mean.h"
#include "sloserve/loadgen/load_generator.h"
#include "sloserve/loadgen/model_metadata.h"
#include "sloserve/report/run_table.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace demo_cmd {

const std::vector<FlagSpec> kFlags = {
    {"config", "FILE", "serve this config instead of the embedded default"},
    {"set", "KEY=VALUE", "override a config key of both runs (KEY= removes it)", true},
    {"ramp", "QPS,QPS,...", "offered load per step (default 400,1600,2400,3200,2400,1600,400)"},
    {"step-seconds", "S", "seconds per step (default 4)"},
    {"baseline", "VARIANT",
     "fixed variant of the comparison run (default shufflenet_v2_x1_5, the most accurate\n"
     "      variant that holds 3,200 qps on 60 workers at SLO 150 ms); none = skip it"},
    {"seed", "N", "seed of the arrival process (default 1)"},
    {"json", "", "print {ramp, runs: [{name, steps: [...]}]} as JSON"},
    {"help", "", "show this help"},
};

struct StepResult {
  double qps = 0;
  LoadReport report;
  double accuracy = -1;  // mean over answered requests, %
};

struct RunResult {
  std::string name;
  std::string summary;
  std::vector<StepResult> steps;
};

StatusOr<std::vector<double>> ParseRamp(const std::string& text) {
  std::vector<double> ramp;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const std::optional<double> v = ParseNumber(item);
    if (!v || !(*v > 0) || *v > 100000) {
      return InvalidArgumentError("--ramp '" + text +
                                  "': expected comma-separated rates in (0, 100000] qps");
    }
    ramp.push_back(*v);
  }
  if (ramp.empty() || ramp.size() > 100) return InvalidArgumentError("--ramp: 1 to 100 steps");
  return ramp;
}

// "efficientnet_v2_l 61%, efficientnet_b4 30%, ..." (the top `n` by answers).
std::string VariantMix(const LoadReport& r, size_t n) {
  std::vector<std::pair<int64_t, std::string>> by_count;
  int64_t total = 0;
  for (const auto& [variant, count] : r.variant_counts) {
    by_count.emplace_back(count, variant);
    total += count;
  }
  std::sort(by_count.rbegin(), by_count.rend());
  std::string out;
  for (size_t i = 0; i < by_count.size() && i < n; ++i) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s%s %.0f%%", out.empty() ? "" : ", ",
                  by_count[i].second.c_str(),
                  100.0 * by_count[i].first / std::max<int64_t>(1, total));
    out += buf;
  }
  if (by_count.size() > n) out += ", +" + std::to_string(by_count.size() - n) + " more";
  return out.empty() ? "-" : out;
}

// Serves `sets` and drives it through the ramp; one report per step.
StatusOr<RunResult> RunRamp(const std::string& name, const std::string& config,
                            std::vector<std::string> sets, const std::vector<double>& ramp,
                            double step_seconds, uint64_t seed, bool json) {
  sets.push_back("server.port=0");  // any free port: the demo never collides
  ASSIGN_OR_RETURN(ServeSetup setup, BuildServeSetup(config, sets, /*deferred_init=*/true));
  if (setup.repository_models) {  // their workers would need the real loads serve does
    return InvalidArgumentError(
        "the demo serves emulated models only; serve a config with models[i].repository "
        "with `sloserve serve`");
  }
  ASSIGN_OR_RETURN(auto server, HttpServer::Create(setup.http, setup.runtime.get()));
  ASSIGN_OR_RETURN(uint16_t port, server->Start());
  setup.runtime->Start();
  if (!json) {
    std::printf("[%s] serving %s on http://%s:%u\n", name.c_str(), setup.summary.c_str(),
                setup.http.host.c_str(), port);
    std::fflush(stdout);
  }
  Status init = setup.runtime->WaitUntilInitialized();
  if (!init.ok()) {
    setup.runtime->Stop(Duration(0));
    server->Stop();
    return init.WithPrefix(name);
  }

  const Deployment& d = setup.runtime->deployment();
  const std::string task = setup.suite->tasks()[d.task].name;
  TaskInfo info;
  for (const TaskInfo& t : setup.runtime->Tasks()) {
    if (t.name == task) info = t;
  }
  LoadOptions o;
  o.host = setup.http.host;
  o.port = port;
  o.task = task;
  o.slo_ms = ToMillis(d.slo);
  o.input_name = info.input_name;
  o.datatype = info.input_datatype;
  o.shape = info.input_shape;
  for (int64_t& dim : o.shape) dim = dim < 0 ? 1 : dim;  // one row per request

  RunResult run{name, setup.summary, {}};
  ProgressBar bar(name, !json && StderrIsTerminal());
  Status status;
  for (size_t i = 0; i < ramp.size() && status.ok(); ++i) {
    ArrivalSpec a;
    a.kind = "poisson";
    a.rate_qps = ramp[i];
    a.horizon = SecondsF(step_seconds);
    auto schedule = BuildSchedule(a, seed + i);
    if (!schedule.ok()) {
      status = schedule.status();
      break;
    }
    o.schedule = std::move(schedule).value();
    const double total = static_cast<double>(o.schedule.size());
    const std::string detail = "step " + std::to_string(i + 1) + "/" + std::to_string(ramp.size()) +
                               " at " + std::to_string(static_cast<int>(ramp[i])) + " qps";
    auto report = RunLoad(o, [&](const LoadProgress& p) {
      bar.Update((static_cast<double>(i) + static_cast<double>(p.completed) / total) /
                     static_cast<double>(ramp.size()),
                 detail);
    });
    if (!report.ok()) {
      status = report.status();
      break;
    }
    StepResult step{ramp[i], std::move(report).value(), -1};
    step.accuracy = MeanAccuracy(step.report, *setup.suite);
    for (const std::string& w : step.report.client_bottleneck.warnings) {
      std::fprintf(stderr, "[%s] step %zu: %s\n", name.c_str(), i + 1, w.c_str());
    }
    run.steps.push_back(std::move(step));
  }
  bar.Finish();
  setup.runtime->Stop(Seconds(5));  // engine first, so the server's stop is prompt
  server->Stop();
  RETURN_IF_ERROR(status.WithPrefix(name));
  return run;
}

nlohmann::json StepJson(const StepResult& s) {
  return {{"offered_qps", s.qps},
          {"accuracy", s.accuracy},
          {"slo_attainment", s.report.slo_attainment_client},
          {"latency_p99_ms", s.report.latency_p99_ms},
          {"answered", s.report.ok},
          {"errors", s.report.completed() - s.report.ok},
          {"variants", s.report.variant_counts},
          {"client_bottleneck", s.report.client_bottleneck.is_bottleneck()}};
}

// Answer-weighted mean over the steps of a per-step value.
double Weighted(const RunResult& r, double StepResult::*field) {
  double sum = 0, n = 0;
  for (const StepResult& s : r.steps) {
    if (s.*field < 0) continue;
    sum += s.*field * static_cast<double>(s.report.ok);
    n += static_cast<double>(s.report.ok);
  }
  return n > 0 ? sum / n : -1;
}

double Attainment(const RunResult& r) {
  double met = 0, sent = 0;
  for (const StepResult& s : r.steps) {
    met += s.report.slo_attainment_client * static_cast<double>(s.report.sent);
    sent += static_cast<double>(s.report.sent);
  }
  return sent > 0 ? met / sent : 0;
}

void PrintRuns(const std::vector<RunResult>& runs, const std::vector<double>& ramp,
               double step_seconds) {
  std::string ramp_text;
  for (double q : ramp) ramp_text += (ramp_text.empty() ? "" : " -> ") + std::to_string(int(q));
  std::printf("\nload ramp %s qps, %.0f s per step (Poisson arrivals)\n", ramp_text.c_str(),
              step_seconds);
  for (const RunResult& r : runs) {
    std::printf("\n%s: %s\n", r.name.c_str(), r.summary.c_str());
    std::printf("  %6s  %8s  %8s  %8s  %s\n", "qps", "accuracy", "SLO met", "p99 ms",
                "variants (share of answers)");
    for (const StepResult& s : r.steps) {
      std::printf("  %6.0f  %7.2f%%  %7.2f%%  %8.1f  %s\n", s.qps, s.accuracy,
                  100.0 * s.report.slo_attainment_client, s.report.latency_p99_ms,
                  VariantMix(s.report, 3).c_str());
    }
    std::printf("  %6s  %7.2f%%  %7.2f%%\n", "all", Weighted(r, &StepResult::accuracy),
                100.0 * Attainment(r));
  }
  if (runs.size() == 2) {
    std::printf("\n%s vs %s over the ramp: accuracy %+.2f points, SLO attainment %+.2f points\n",
                runs[0].name.c_str(), runs[1].name.c_str(),
                Weighted(runs[0], &StepResult::accuracy) - Weighted(runs[1], &StepResult::accuracy),
                100.0 * (Attainment(runs[0]) - Attainment(runs[1])));
  }
}

// The comparison run's config: `sets` with the fixed `baseline` variant.
std::vector<std::string> BaselineSets(std::vector<std::string> sets, const std::string& baseline) {
  sets.push_back("policy.selection=fixed");
  sets.push_back("policy.variant=" + baseline);
  sets.push_back("policy.name=fixed-" + baseline);
  return sets;
}

// A --baseline that is not a variant of the served task failed only when the comparison
// run started, after the whole adaptive ramp (minutes): checked before any run.
Status CheckBaseline(const std::string& config, const std::vector<std::string>& sets,
                     const std::string& baseline) {
  ASSIGN_OR_RETURN(ServeSetup setup,
                   BuildServeSetup(config, BaselineSets(sets, baseline), /*deferred_init=*/true));
  const ProfileSuite& suite = *setup.suite;
  const TaskId task = setup.runtime->deployment().task;
  const std::optional<VariantId> v = suite.FindVariant(baseline);
  if (v && suite.variants()[*v].task == task) return OkStatus();
  std::vector<std::string> names;
  for (VariantId id : suite.VariantsOfTask(task)) names.push_back(suite.variants()[id].name);
  return InvalidArgumentError("--baseline: '" + baseline + "' is not a variant of task '" +
                              suite.tasks()[task].name + "' of suite " + suite.name() + " (" +
                              DidYouMean(baseline, names) +
                              "expected none or one of: " + JoinNames(names) + ")");
}

Status Run(const Args& args) {
  const std::string config = args.Get("config", "");
  const std::vector<std::string> sets = args.GetAll("set");
  ASSIGN_OR_RETURN(std::vector<double> ramp,
                   ParseRamp(args.Get("ramp", "400,1600,2400,3200,2400,1600,400")));
  ASSIGN_OR_RETURN(double step_seconds, args.GetDouble("step-seconds", 4));
  if (!(step_seconds >= 0.5 && step_seconds <= 3600))
    return InvalidArgumentError("--step-seconds: must be in [0.5, 3600]");
  ASSIGN_OR_RETURN(int64_t seed, args.GetIntIn("seed", 1, kSeedRange));
  const std::string baseline = args.Get("baseline", "shufflenet_v2_x1_5");
  const bool json = args.Has("json");
  if (baseline != "none") RETURN_IF_ERROR(CheckBaseline(config, sets, baseline));

  std::vector<RunResult> runs;
  ASSIGN_OR_RETURN(RunResult main_run, RunRamp("sloserve", config, sets, ramp, step_seconds,
                                               static_cast<uint64_t>(seed), json));
  runs.push_back(std::move(main_run));
  if (baseline != "none") {
    ASSIGN_OR_RETURN(RunResult base_run,
                     RunRamp("fixed " + baseline, config, BaselineSets(sets, baseline), ramp,
                             step_seconds, static_cast<uint64_t>(seed), json));
    runs.push_back(std::move(base_run));
  }

  if (json) {
    nlohmann::json out;
    out["ramp_qps"] = ramp;
    out["step_seconds"] = step_seconds;
    for (const RunResult& r : runs) {
      nlohmann::json steps = nlohmann::json::array();
      for (const StepResult& s : r.steps) steps.push_back(StepJson(s));
      out["runs"].push_back({{"name", r.name},
                             {"summary", r.summary},
                             {"accuracy", Weighted(r, &StepResult::accuracy)},
                             {"slo_attainment", Attainment(r)},
                             {"steps", steps}});
    }
    std::cout << out.dump(2) << std::endl;
    return OkStatus();
  }
  PrintRuns(runs, ramp, step_seconds);
  return OkStatus();
}

}  // namespace demo_cmd

int DemoCommand(const std::vector<std::string>& argv) {
  auto help = [] {
    std::printf(
        "usage: sloserve demo [options]\n\n"
        "The main job on embedded defaults. Serves the RAMSIS image suite on 127.0.0.1 (60\n"
        "emulated workers, SLO 150 ms, RAMSIS picking the variant of every batch from its\n"
        "MDP policy set), drives it through a load ramp with the load generator, then serves\n"
        "the same ramp with one fixed variant, and prints per step the accuracy, SLO\n"
        "attainment, p99 latency and the mix of variants that answered.\n\noptions:\n%s",
        FlagsHelp(demo_cmd::kFlags).c_str());
  };
  return RunSubcommand("demo", argv, demo_cmd::kFlags, help, demo_cmd::Run, 0);
}

}  // namespace sloserve::cli

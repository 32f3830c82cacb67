// `sloserve sim CONFIG.yaml [--set key=value ...] [--json|--csv] [--series] [--records F]
// [--jobs N]`: one experiment or a sweep.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli_args.h"
#include "cluster_sim_command.h"
#include "commands.h"
#include "progress_bar.h"
#include "sloserve/cluster/cluster_experiment.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/config/suite_resolver.h"
#include "sloserve/report/model_table.h"
#include "sloserve/report/run_table.h"
#include "sloserve/sim/sweep.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace sim_cmd {

const std::vector<FlagSpec> kFlags = {
    {"set", "KEY=VALUE", "override a config key; VALUE [a,b,c] sweeps it, KEY= removes it", true},
    {"json", "", "print results as JSON ({experiment, rows: [...]})"},
    {"csv", "", "print results as CSV"},
    {"series", "", "with --json: add the per-interval time series of every run"},
    {"records", "FILE", "write one CSV line per query (single-run experiments only)"},
    {"jobs", "N", "runs simulated in parallel (default: number of cores)"},
    {"progress", "", "force the progress bar on stderr (default: only on a terminal)"},
    {"no-progress", "", "never show the progress bar"},
    {"help", "", "show this help"},
};

void PrintHelp() {
  std::printf(
      "usage: sloserve sim CONFIG.yaml [options]\n\n"
      "Runs the trace-driven simulator on an experiment config (schema: docs/sim.md).\n"
      "Lists under `sweep:` (and a `policies:` list) expand into one run per combination;\n"
      "each run is deterministic for its seed. Prints one row per run.\n"
      "A config with a `cluster:` section is a model-aware placement experiment (machines,\n"
      "model caches, cold starts; policies random, colocation, colocation_queue, registry,\n"
      "adaptive, prefetch, multiplexed): its keys are in docs/model-aware.md.\n\n"
      "options:\n%s\nconfig keys:\n",
      FlagsHelp(kFlags).c_str());
  for (const KeyDecl* k : RunKeys()) std::printf("  %-26s %s\n", k->name.c_str(), k->help.c_str());
  std::printf("  %-26s %s\n", "policy.*",
              "the policies' names and options (sloserve policies --describe NAME)");
  std::printf(
      "every key, with types, defaults and ranges: docs/config.md; check a file with\n"
      "`sloserve config check FILE`\n");
  std::printf(
      "\nexample: sloserve sim experiments/foundation/edf_image.yaml --set workers=40 --json\n");
}

Status Run(const Args& args) {
  if (args.positionals().size() != 1) {
    return InvalidArgumentError("expected exactly one CONFIG.yaml (see sloserve sim --help)");
  }
  if (args.Has("series") && !args.Has("json")) return InvalidArgumentError("--series needs --json");
  if (args.Has("json") && args.Has("csv")) {
    return InvalidArgumentError("--json and --csv: give one (results print in one format)");
  }
  // Read once: a pipe (/dev/stdin, <(...)) gives its text only once.
  const std::string& path = args.positionals()[0];
  ASSIGN_OR_RETURN(const std::string text, ReadConfigFile(path));
  // A `cluster:` section: model-aware placement on machines (docs/model-aware.md).
  if (IsClusterExperiment(text)) {
    for (const char* flag : {"csv", "series"}) {
      if (args.Has(flag)) {
        return InvalidArgumentError(std::string("--") + flag +
                                    ": not for a model-aware placement experiment (a cluster: "
                                    "config prints a table or --json)");
      }
    }
    return RunClusterSim(path, text, args.GetAll("set"), args.Has("json"),
                         args.Has("records") ? args.Get("records") : "");
  }
  ASSIGN_OR_RETURN(ExperimentConfig config, ParseExperimentConfig(text, path));
  RETURN_IF_ERROR(ApplyOverrides(&config, args.GetAll("set")));
  ASSIGN_OR_RETURN(std::vector<RunSpec> runs, ExpandRuns(config));
  // The series' per-interval p99 keeps every latency until a run ends: only on request.
  if (args.Has("series")) {
    for (RunSpec& r : runs) r.series_latency = true;
  }
  ASSIGN_OR_RETURN(
      int64_t jobs,
      args.GetIntIn("jobs", std::max(1u, std::thread::hardware_concurrency()), kJobsRange));

  std::vector<RunResult> results;
  if (args.Has("records")) {
    if (runs.size() != 1) return InvalidArgumentError("--records needs a single-run experiment");
    std::ofstream out(args.Get("records"));
    if (!out) return UnavailableError("--records: cannot write " + args.Get("records"));
    out << "id,task,app,size,variant,worker,batch_size,arrival_us,start_us,finish_us,queue_us,"
           "service_us,met_slo,dropped,drop_reason\n";
    ASSIGN_OR_RETURN(ProfileSuite suite, ResolveRunSuite(runs[0]));
    SimHooks hooks;
    hooks.on_record = [&](const QueryRecord& r) {
      out << r.id << ',' << suite.tasks()[r.task].name << ',' << r.app << ',' << r.size << ','
          << (r.variant == kNoId ? "" : suite.variants()[r.variant].name) << ','
          << (r.worker == kNoId ? -1 : static_cast<int64_t>(r.worker)) << ',' << r.batch_size << ','
          << r.arrival.time_since_epoch().count() << ',' << r.start.time_since_epoch().count()
          << ',' << r.finish.time_since_epoch().count() << ',' << r.queue_time().count() << ','
          << r.service_time().count() << ',' << (r.met_slo ? 1 : 0) << ',' << (r.dropped ? 1 : 0)
          << ',' << DropReasonName(r.drop_reason) << '\n';
    };
    ASSIGN_OR_RETURN(RunResult r, RunSimulation(runs[0], suite, hooks));
    results.push_back(std::move(r));
  } else {
    bool show = !args.Has("no-progress") && (args.Has("progress") || StderrIsTerminal());
    ProgressBar bar("sim", show);
    ASSIGN_OR_RETURN(results, RunSweep(runs, static_cast<int>(jobs), [&](const SweepProgress& p) {
                       bar.Update(p.current_fraction / static_cast<double>(p.total),
                                  std::to_string(p.done) + "/" + std::to_string(p.total) + " runs");
                     }));
    bar.Finish();
  }

  if (args.Has("json")) {
    // Multi-model runs add a row per model (field `model`) after their total.
    std::cout << RunsWithModelsJson(config.name, results, args.Has("series")).dump(2) << std::endl;
  } else if (args.Has("csv")) {
    std::cout << RunsCsv(results);
  } else {
    if (!config.name.empty()) std::cout << config.name << "\n";
    std::cout << RunsTable(results);
    std::cout << ModelTables(results);
  }
  return OkStatus();
}

}  // namespace sim_cmd

int SimCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("sim", argv, sim_cmd::kFlags, sim_cmd::PrintHelp, sim_cmd::Run, 1);
}

}  // namespace sloserve::cli

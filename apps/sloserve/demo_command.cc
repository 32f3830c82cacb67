// `sloserve demo`: the main job on embedded defaults. Starts the server on 127.0.0.1,
// drives it open-loop with the load generator, prints both sides' reports, shuts down.
#include <cstdio>
#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "load_schedule.h"
#include "progress_bar.h"
#include "serve_setup.h"
#include "sloserve/loadgen/load_generator.h"
#include "sloserve/report/run_table.h"

namespace sloserve::cli {
namespace {

const std::vector<FlagSpec> kFlags = {
    {"config", "FILE", "serve this config instead of the embedded default"},
    {"set", "KEY=VALUE", "override a config key (e.g. policy.variant=resnet50; KEY= removes it)",
     true},
    {"qps", "RATE", "offered load, Poisson arrivals (default 800)"},
    {"duration", "SECONDS", "how long to drive the server (default 10)"},
    {"seed", "N", "seed of the arrival process (default 1)"},
    {"json", "", "print {server, loadgen, metrics} as JSON"},
    {"help", "", "show this help"},
};

Status Run(const Args& args) {
  std::vector<std::string> sets = args.GetAll("set");
  sets.push_back("server.port=0");  // any free port: the demo never collides
  ASSIGN_OR_RETURN(ServeSetup setup, BuildServeSetup(args.Get("config", ""), sets));
  ASSIGN_OR_RETURN(double qps, args.GetDouble("qps", 800));
  ASSIGN_OR_RETURN(double duration, args.GetDouble("duration", 10));
  ASSIGN_OR_RETURN(int64_t seed, args.GetInt("seed", 1));
  if (qps <= 0 || duration <= 0)
    return InvalidArgumentError("--qps and --duration must be positive");

  setup.runtime->Start();
  ASSIGN_OR_RETURN(auto server, HttpServer::Create(setup.http, setup.runtime.get()));
  ASSIGN_OR_RETURN(uint16_t port, server->Start());
  const bool json = args.Has("json");
  if (!json) {
    std::printf("sloserve demo: serving %s\n", setup.summary.c_str());
    std::printf(
        "               on http://%s:%u; driving it at %.0f queries/s (Poisson) for %.0f s\n\n",
        setup.http.host.c_str(), port, qps, duration);
    std::fflush(stdout);
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
  ArrivalSpec a;
  a.kind = "poisson";
  a.rate_qps = qps;
  a.horizon = SecondsF(duration);
  ASSIGN_OR_RETURN(o.schedule, BuildSchedule(a, static_cast<uint64_t>(seed)));

  ProgressBar bar("loadgen", !json && StderrIsTerminal());
  const double total = static_cast<double>(o.schedule.size());
  auto report = RunLoad(o, [&](const LoadProgress& p) {
    bar.Update(static_cast<double>(p.completed) / total, std::to_string(p.completed) + " answered");
  });
  bar.Finish();
  setup.runtime->Stop(Seconds(5));  // engine first, so the server's stop is prompt
  server->Stop();
  if (!report.ok()) return report.status();
  MetricsSummary m = setup.runtime->Summary();
  double accuracy = MeanAccuracy(*report, *setup.suite);

  if (json) {
    nlohmann::json out;
    out["server"] = {{"summary", setup.summary}, {"port", port}};
    out["loadgen"] = report->ToJson();
    out["loadgen"]["accuracy"] = accuracy;
    out["metrics"] = SummaryJson(m);
    std::cout << out.dump(2) << std::endl;
    return OkStatus();
  }
  std::printf("client side (loadgen)\n%s", report->ToText().c_str());
  if (accuracy >= 0) std::printf("accuracy      %.3f%% (mean over answered requests)\n", accuracy);
  std::printf("\nserver side (engine metrics)\n%s", SummaryText(m).c_str());
  return OkStatus();
}

}  // namespace

int DemoCommand(const std::vector<std::string>& argv) {
  auto help = [] {
    std::printf(
        "usage: sloserve demo [options]\n\nThe main job on embedded defaults: serves the RAMSIS "
        "image suite (examples/serve_image.yaml)\non 127.0.0.1, drives it open-loop with the "
        "load generator, prints what the client\nsaw and what the engine measured, shuts "
        "down.\n\noptions:\n%s",
        FlagsHelp(kFlags).c_str());
  };
  return RunSubcommand("demo", argv, kFlags, help, Run);
}

}  // namespace sloserve::cli

// `sloserve profile show SUITE`: what a profile suite holds; `sloserve profile
// load-latency SUITE`: ModelSwitching's offline response-latency measurement.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "progress_bar.h"
#include "sloserve/core/declared_key.h"
#include "sloserve/infadapter/capacity.h"
#include "sloserve/mdp/synthetic.h"
#include "sloserve/profile/profile.h"
#include "sloserve/sim/load_latency_profile.h"
#include "torch_commands.h"

namespace sloserve::cli {

// Named, not anonymous: the unity build compiles the commands in one batch.
namespace profile_cmd {

const std::vector<FlagSpec> kFlags = {
    {"hardware", "NAME", "hardware type (show: filter; load-latency: workers' type)"},
    {"task", "NAME", "load-latency: task (default: the suite's first)"},
    {"slo-ms", "LIST", "load-latency: SLOs, one table section each (default: the task's)"},
    {"workers", "LIST", "load-latency: worker counts, a,b,c or from:to:step (default 20:100:10)"},
    {"loads", "LIST", "load-latency: loads in qps (default 400:4000:100)"},
    {"variants", "LIST", "load-latency: variants to measure (default: every variant of the task)"},
    {"duration", "SECONDS", "load-latency: simulated seconds per point (default 30)"},
    {"seed", "N", "load-latency: seed (default 1)"},
    {"jobs", "N", "load-latency: parallel simulations (default: cores)"},
    {"out", "FILE", "load-latency, synthetic: write the result here (default: stdout)"},
    {"front", "LIST",
     "synthetic: Pareto variants to interpolate (default: RAMSIS' 9 image models)"},
    {"step", "POINTS", "synthetic: accuracy step between synthetic models (default 0.5)"},
    {"json", "", "show: print as JSON"},
    {"help", "", "show this help"}};

void PrintHelp() {
  std::printf(
      "usage: sloserve profile show SUITE [options]\n"
      "       sloserve profile load-latency SUITE [options]\n"
      "       sloserve profile synthetic SUITE [options]\n"
      "       sloserve profile measure --model-repository DIR [options]   (see its --help)\n\n"
      "SUITE is an embedded suite (ramsis-image, ramsis-text, kairos-recsys, infadapter-resnet)\n"
      "or a path. `show` prints tasks, hardware, and per variant its accuracy and p50/p95\n"
      "latency at batch 1 and at its largest profiled batch. `load-latency` is\n"
      "ModelSwitching's offline profiling: it simulates each variant alone at each worker\n"
      "count and load and writes the p99 response latencies (the model_switching policy's\n"
      "`table`). `synthetic` writes a suite of models interpolated along the Pareto front\n"
      "(RAMSIS appendix E: 9 image models at a 0.5-point step give 60). For a suite with\n"
      "capacity records (infadapter-resnet) `show` also prints InfAdapter's capacity line\n"
      "per variant (least squares at 1, 2, 4, 8, 16 cores, the task's SLO) and its error\n"
      "(docs/infadapter.md).\n\noptions:\n%s",
      FlagsHelp(kFlags).c_str());
}

// Values a list flag may hold: each is one or more simulations, and a range is counted
// before it is expanded (1:1000000000:1 expanded for ever).
constexpr double kMaxListValues = 10'000;
constexpr double kMaxWorkerCount = 100'000;  // the config's `workers` bound

// "20:100:10" -> 20,30,...,100; "1,2,5" -> 1,2,5.
StatusOr<std::vector<double>> ParseList(const std::string& flag, const std::string& text) {
  std::vector<double> out;
  auto number = [&](const std::string& s) -> StatusOr<double> {
    const std::optional<double> v = ParseNumber(s);
    if (!v || *v <= 0) {
      return InvalidArgumentError("--" + flag + ": expected positive numbers, got \"" + s + "\"");
    }
    return *v;
  };
  if (std::count(text.begin(), text.end(), ':') == 2) {
    size_t a = text.find(':'), b = text.rfind(':');
    ASSIGN_OR_RETURN(double from, number(text.substr(0, a)));
    ASSIGN_OR_RETURN(double to, number(text.substr(a + 1, b - a - 1)));
    ASSIGN_OR_RETURN(double step, number(text.substr(b + 1)));
    if (to < from) return InvalidArgumentError("--" + flag + ": range ends before it starts");
    const double count = std::floor((to - from) / step + 1e-9) + 1;
    if (!(count <= kMaxListValues)) {
      char values[32];
      std::snprintf(values, sizeof values, "%.10g", count);
      return InvalidArgumentError(
          "--" + flag + ": " + text + " expands to " + values + " values; at most " +
          std::to_string(static_cast<int>(kMaxListValues)) + " are allowed");
    }
    // from + i * step, not repeated addition: a step below the spacing of doubles at
    // `from` would never advance.
    for (int i = 0; i < static_cast<int>(count); ++i) out.push_back(from + i * step);
    return out;
  }
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    ASSIGN_OR_RETURN(double v, number(item));
    out.push_back(v);
    if (out.size() > kMaxListValues) {
      return InvalidArgumentError("--" + flag + ": at most " +
                                  std::to_string(static_cast<int>(kMaxListValues)) +
                                  " values are allowed");
    }
  }
  return out;
}

// Prints `text`, or writes it to --out and says what was written on stderr.
Status WriteOutput(const Args& args, const std::string& text, const std::string& what) {
  if (!args.Has("out")) {
    std::cout << text;
    return OkStatus();
  }
  std::ofstream out(args.Get("out"));
  if (!out) return UnavailableError("--out: cannot write " + args.Get("out"));
  out << text;
  std::fprintf(stderr, "wrote %s to %s\n", what.c_str(), args.Get("out").c_str());
  return OkStatus();
}

Status LoadLatency(const Args& args, const ProfileSuite& suite) {
  LoadLatencyRequest req;
  req.base.suite = args.positionals()[1];
  req.base.task = args.Get("task", "");
  req.base.hardware = args.Get("hardware", "");
  std::vector<double> slos = {0};  // 0: the task's default SLO
  if (args.Has("slo-ms")) {
    ASSIGN_OR_RETURN(slos, ParseList("slo-ms", args.Get("slo-ms")));
    for (double slo : slos) {
      char text[32];
      std::snprintf(text, sizeof text, "%.10g", slo);
      RETURN_IF_ERROR(CheckFlagRange("slo-ms", slo, text, {0, kMaxSloMillis, true, "ms"}).status());
    }
  }
  ASSIGN_OR_RETURN(double duration,
                   args.GetDoubleIn("duration", 30, {0, kMaxRunSeconds, true, "seconds"}));
  req.base.arrival.horizon = SecondsF(duration);
  ASSIGN_OR_RETURN(int64_t seed, args.GetIntIn("seed", 1, kSeedRange));
  req.base.seed = static_cast<uint64_t>(seed);
  ASSIGN_OR_RETURN(std::vector<double> workers,
                   ParseList("workers", args.Get("workers", "20:100:10")));
  for (double w : workers) {
    // Whole and bounded before the cast to int, as the config's `workers`.
    if (w != std::floor(w) || w > kMaxWorkerCount) {
      char text[32];
      std::snprintf(text, sizeof text, "%.10g", w);
      return InvalidArgumentError("--workers: expected whole numbers in [1, " +
                                  std::to_string(static_cast<int>(kMaxWorkerCount)) + "], got " +
                                  text);
    }
    req.workers.push_back(static_cast<int>(w));
  }
  ASSIGN_OR_RETURN(req.loads_qps, ParseList("loads", args.Get("loads", "400:4000:100")));
  if (args.Has("variants")) {
    std::stringstream ss(args.Get("variants"));
    for (std::string v; std::getline(ss, v, ',');) req.variants.push_back(v);
  }
  ASSIGN_OR_RETURN(
      int64_t jobs,
      args.GetIntIn("jobs", std::max(1u, std::thread::hardware_concurrency()), kJobsRange));
  req.jobs = static_cast<int>(jobs);
  ProgressBar bar("load-latency", StderrIsTerminal());
  std::string text;
  size_t rows = 0;
  for (size_t i = 0; i < slos.size(); ++i) {
    req.base.slo = MillisF(slos[i]);
    ASSIGN_OR_RETURN(ResponseLatencyTable table,
                     MeasureResponseLatency(req, suite, [&](size_t done, size_t total) {
                       double f = (static_cast<double>(i) + static_cast<double>(done) / total) /
                                  static_cast<double>(slos.size());
                       bar.Update(
                           f, "SLO " + std::to_string(i + 1) + "/" + std::to_string(slos.size()));
                     }));
    // Parallel runs finish in any order: sort so the file is the same every time.
    std::vector<ResponseLatencyRow> sorted = table.rows();
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return std::tie(a.variant, a.workers, a.slo_ms, a.load_qps) <
             std::tie(b.variant, b.workers, b.slo_ms, b.load_qps);
    });
    for (const ResponseLatencyRow& r : sorted) text += ResponseLatencyTable::Format(r) + "\n";
    rows += sorted.size();
  }
  bar.Finish();
  // The header records exactly how the table was made.
  std::string command = "sloserve profile load-latency " + req.base.suite;
  for (const char* flag :
       {"task", "hardware", "slo-ms", "workers", "loads", "variants", "duration", "seed"}) {
    if (args.Has(flag)) command += std::string(" --") + flag + " " + args.Get(flag);
  }
  text = "# ModelSwitching response-latency table: " + command + "\n" +
         ResponseLatencyTable::Header() + "\n" + text;
  return WriteOutput(args, text, std::to_string(rows) + " measurements");
}

Status Synthetic(const Args& args, const ProfileSuite& suite) {
  mdp::SyntheticSuiteOptions o;
  if (args.Has("front")) {
    std::stringstream ss(args.Get("front"));
    for (std::string v; std::getline(ss, v, ',');) o.front.push_back(v);
  } else {
    o.front = mdp::RamsisImageParetoVariants();
  }
  ASSIGN_OR_RETURN(o.accuracy_step, args.GetDouble("step", 0.5));
  ASSIGN_OR_RETURN(ProfileSuite synth, mdp::MakeSyntheticParetoSuite(suite, o));
  return WriteOutput(args, WriteProfileText(synth),
                     std::to_string(synth.variants().size()) + " variants");
}

Status Run(const Args& a) {
  const Args* args = &a;
  if (args->positionals().size() != 2 ||
      (args->positionals()[0] != "show" && args->positionals()[0] != "load-latency" &&
       args->positionals()[0] != "synthetic")) {
    return InvalidArgumentError(
        "expected: profile show|load-latency|synthetic SUITE (see sloserve profile --help)");
  }
  ASSIGN_OR_RETURN(ProfileSuite loaded, LoadSuite(args->positionals()[1]));
  if (args->positionals()[0] == "load-latency") return LoadLatency(*args, loaded);
  if (args->positionals()[0] == "synthetic") return Synthetic(*args, loaded);
  const ProfileSuite* suite = &loaded;
  if (args->Has("hardware") && !suite->FindHardware(args->Get("hardware"))) {
    std::string names;
    for (const HardwareSpec& h : suite->hardware()) names += (names.empty() ? "" : ", ") + h.name;
    return NotFoundError("--hardware: '" + args->Get("hardware") + "' is not in suite '" +
                         suite->name() + "' (it has " + names + ")");
  }
  nlohmann::json out;
  out["suite"] = suite->name();
  out["provenance"] = suite->provenance();
  for (const TaskSpec& t : suite->tasks()) {
    out["tasks"].push_back({{"name", t.name}, {"default_slo_ms", ToMillis(t.default_slo)}});
  }
  for (const HardwareSpec& h : suite->hardware()) {
    out["hardware"].push_back(
        {{"name", h.name}, {"price_per_hour", h.price_per_hour}, {"cores", h.cores}});
  }
  out["variants"] = nlohmann::json::array();
  for (HardwareId hw = 0; hw < suite->hardware().size(); ++hw) {
    if (args->Has("hardware") && suite->hardware()[hw].name != args->Get("hardware")) continue;
    for (VariantId v = 0; v < suite->variants().size(); ++v) {
      const VariantSpec& var = suite->variants()[v];
      const auto& sizes = suite->BatchSizes(hw, v);
      if (sizes.empty()) continue;
      const LatencyDistribution* lo = suite->Latency(hw, v, sizes.front());
      const LatencyDistribution* hi = suite->Latency(hw, v, sizes.back());
      out["variants"].push_back({{"hardware", suite->hardware()[hw].name},
                                 {"variant", var.name},
                                 {"task", suite->tasks()[var.task].name},
                                 {"accuracy", var.accuracy},
                                 {"min_batch", sizes.front()},
                                 {"max_batch", sizes.back()},
                                 {"p50_ms_min_batch", ToMillis(lo->Quantile(0.5))},
                                 {"p95_ms_min_batch", ToMillis(lo->Quantile(0.95))},
                                 {"p50_ms_max_batch", ToMillis(hi->Quantile(0.5))},
                                 {"p95_ms_max_batch", ToMillis(hi->Quantile(0.95))}});
    }
  }
  // InfAdapter's capacity fits (docs/infadapter.md), for suites with capacity records.
  std::string capacity_note;
  if (!suite->capacity_points().empty() && !suite->tasks().empty()) {
    InfAdapterCapacityOptions co;
    co.slo = suite->tasks().front().default_slo;
    auto model = BuildInfAdapterCapacity(*suite, co);
    if (!model.ok()) {
      capacity_note = model.status().ToString();
    } else {
      out["capacity_fits"] = nlohmann::json::array();
      for (const InfAdapterVariantCapacity& v : model->variants) {
        out["capacity_fits"].push_back({{"variant", v.name},
                                        {"slo_ms", ToMillis(model->slo)},
                                        {"fit_cores", co.fit_cores},
                                        {"intercept_rps", v.fit.intercept},
                                        {"slope_rps_per_core", v.fit.slope},
                                        {"rmse_rps", v.fit.rmse},
                                        {"max_relative_error", v.fit.max_relative_error},
                                        {"headroom", model->headroom}});
      }
      // Core counts missing from the table, interpolated (never extrapolated).
      out["capacity_notes"] = model->notes;
    }
  }
  if (args->Has("json")) {
    std::cout << out.dump(2) << std::endl;
    return OkStatus();
  }
  std::printf("suite %s\n%s\n\n", suite->name().c_str(), suite->provenance().c_str());
  std::printf("%-12s %-24s %-8s %8s %6s %10s %10s %10s\n", "hardware", "variant", "task", "acc%",
              "maxb", "p95@b1 ms", "p50@max", "p95@max");
  for (const auto& row : out["variants"]) {
    std::printf("%-12s %-24s %-8s %8.3f %6d %10.2f %10.2f %10.2f\n",
                row["hardware"].get<std::string>().c_str(),
                row["variant"].get<std::string>().c_str(), row["task"].get<std::string>().c_str(),
                row["accuracy"].get<double>(), row["max_batch"].get<int>(),
                row["p95_ms_min_batch"].get<double>(), row["p50_ms_max_batch"].get<double>(),
                row["p95_ms_max_batch"].get<double>());
  }
  if (out.contains("capacity_fits")) {
    std::printf(
        "\nInfAdapter capacity fits (th(n) = a + b n rps at SLO %.0f ms, least squares at "
        "cores 1,2,4,8,16; used at 80%%)\n",
        ToMillis(suite->tasks().front().default_slo));
    std::printf("%-24s %10s %10s %10s %10s\n", "variant", "a rps", "b rps/core", "rmse rps",
                "max rel%");
    for (const auto& row : out["capacity_fits"]) {
      std::printf("%-24s %10.3f %10.3f %10.3f %10.2f\n", row["variant"].get<std::string>().c_str(),
                  row["intercept_rps"].get<double>(), row["slope_rps_per_core"].get<double>(),
                  row["rmse_rps"].get<double>(), 100 * row["max_relative_error"].get<double>());
    }
    for (const auto& note : out["capacity_notes"]) {
      std::printf("note: %s\n", note.get<std::string>().c_str());
    }
  } else if (!capacity_note.empty()) {
    std::printf("\nno InfAdapter capacity fit: %s\n", capacity_note.c_str());
  }
  return OkStatus();
}

}  // namespace profile_cmd

int ProfileCommand(const std::vector<std::string>& argv) {
  if (!argv.empty() && argv[0] == "measure")  // its own flags (torch_commands.cc)
    return ProfileMeasureCommand({argv.begin() + 1, argv.end()});
  return RunSubcommand("profile", argv, profile_cmd::kFlags, profile_cmd::PrintHelp,
                       profile_cmd::Run, 2);
}

}  // namespace sloserve::cli

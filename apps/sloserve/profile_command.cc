// `sloserve profile show SUITE [--hardware H] [--json]`: what a profile suite holds.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "sloserve/profile/profile.h"

namespace sloserve::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"hardware", "NAME", "hardware type to show latencies for (default: every type)"},
    {"json", "", "print as JSON"},
    {"help", "", "show this help"}};

void PrintHelp() {
  std::printf(
      "usage: sloserve profile show SUITE [options]\n\nSUITE is an embedded suite "
      "(ramsis-image, ramsis-text, kairos-recsys, infadapter-resnet) or a path.\n"
      "Prints tasks, hardware, and per variant its accuracy and p50/p95 latency at\n"
      "batch 1 and at its largest profiled batch.\n\noptions:\n%s",
      FlagsHelp(kFlags).c_str());
}

Status Run(const Args& a) {
  const Args* args = &a;
  if (args->positionals().size() != 2 || args->positionals()[0] != "show") {
    return InvalidArgumentError("expected: profile show SUITE (see sloserve profile --help)");
  }
  ASSIGN_OR_RETURN(ProfileSuite loaded, LoadSuite(args->positionals()[1]));
  const ProfileSuite* suite = &loaded;
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
  return OkStatus();
}

}  // namespace

int ProfileCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("profile", argv, kFlags, PrintHelp, Run);
}

}  // namespace sloserve::cli

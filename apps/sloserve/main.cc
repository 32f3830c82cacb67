// sloserve: SLO-aware inference serving. One CLI, one subcommand per job.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "git_revision.h"
#include "torch_commands.h"

#ifdef SLOSERVE_WITH_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

namespace {

struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>&);
  const char* summary;
};

const Command kCommands[] = {
    {"demo", sloserve::cli::DemoCommand,
     "serve the embedded default through a load ramp (7 steps of 4 s), adaptive, then "
     "with one fixed variant"},
    {"serve", sloserve::cli::ServeCommand, "run the KServe v2 HTTP server on a config"},
    {"worker", sloserve::cli::WorkerCommand,
     "a remote worker process for serve --remote-worker (docs/remote-workers.md)"},
    {"loadgen", sloserve::cli::LoadgenCommand, "drive a server open-loop and report latency/SLOs"},
    {"sim", sloserve::cli::SimCommand, "simulate an experiment config (one run or a sweep)"},
    {"policies", sloserve::cli::PoliciesCommand, "list the policies selectable by name"},
    {"config", sloserve::cli::ConfigCommand,
     "check config files (every error, with lines), print their JSON Schema or reference"},
    {"profile", sloserve::cli::ProfileCommand,
     "inspect a profile suite (show, load-latency, synthetic); `profile measure` measures a "
     "TorchScript model repository (docs/torch.md)"},
    {"report", sloserve::cli::ReportCommand, "tables and SVG plots from sim --json results"},
    {"policy", sloserve::cli::PolicyCommand, "generate and inspect RAMSIS MDP policies"},
    {"kairos", sloserve::cli::KairosCommand, "allowable throughput search (Kairos), oracle bound"},
    {"plan", sloserve::cli::PlanCommand,
     "planning without simulation: Kairos' instance mix under a cost budget, InfAdapter's "
     "variants/cores/quotas for a rate"},
    {"forecast", sloserve::cli::ForecastCommand,
     "score load forecasters (InfAdapter's LSTM and baselines) on a trace"},
};

// The malloc this binary runs with (`--version`; CMakeLists.txt SLOSERVE_JEMALLOC).
std::string AllocatorName() {
#ifdef SLOSERVE_WITH_JEMALLOC
  const char* version = nullptr;
  size_t size = sizeof version;
  if (mallctl("version", &version, &size, nullptr, 0) == 0 && version != nullptr) {
    return std::string("jemalloc ") + version;
  }
  return "jemalloc";
#else
  return "the C library's";
#endif
}

void PrintUsage() {
  std::printf(
      "usage: sloserve COMMAND [options]    (sloserve COMMAND --help for details)\n\n"
      "sloserve serves ML inference under latency SLOs: it picks model variants, forms\n"
      "batches and dispatches them to workers, in a real server or a simulator.\n\n"
      "commands:\n");
  for (const Command& c : kCommands) std::printf("  %-10s %s\n", c.name, c.summary);
  std::printf(
      "\n  -h, --help print this help (COMMAND -h: the command's)\n"
      "  --version  print the version, the git revision it was built from and its malloc\n\n"
      "Profile suites and traces are compiled in ($SLOSERVE_PROFILES_DIR replaces them);\n"
      "paths inside a config file are relative to that file. Docs: docs/ of the source\n"
      "tree, or share/doc/sloserve after `cmake --install`.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    PrintUsage();
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
    std::printf("sloserve %s (git %s)\n", SLOSERVE_VERSION, SLOSERVE_GIT_REVISION);
    std::printf("malloc: %s\n", AllocatorName().c_str());
    return 0;
  }
  sloserve::cli::RegisterTorchForecasters();  // `forecaster: lstm` (a no-op without LibTorch)
  std::vector<std::string> rest(argv + 2, argv + argc);
  for (const Command& c : kCommands) {
    if (std::strcmp(argv[1], c.name) == 0) return c.run(rest);
  }
  std::fprintf(stderr, "sloserve: unknown command '%s' (see sloserve --help)\n", argv[1]);
  return 2;
}

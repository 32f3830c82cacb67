// The LibTorch plugin (libsloserve_torch.so, torch_plugin_api.h): `sloserve profile
// measure`, the setup of `serve --model-repository` (issue 11) and the LSTM forecaster.
// Loaded by the executable on first use (torch_plugin.cc).
#include "torch_commands.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_args.h"
#include "git_revision.h"
#include "sloserve/core/declared_key.h"
#include "sloserve/torch/lstm_forecaster.h"
#include "sloserve/torch/model_repository.h"
#include "sloserve/torch/profile_measure.h"
#include "sloserve/torch/torch_executor.h"
#include "torch_plugin_api.h"

extern char** environ;

namespace sloserve::cli::torch_plugin {
namespace {

const std::vector<FlagSpec> kMeasureFlags = {
    {"model-repository", "DIR", "the model repository to measure (required)"},
    {"out", "FILE",
     "write the suite here (default: DIR/<task>/profile.prof if absent, else a new "
     "DIR/<task>/profile-measured[-N].prof; a repository of several tasks: DIR/profile.prof, "
     "one suite of them all)"},
    {"force", "", "let --out overwrite a file tracked by git (such as a committed profile)"},
    {"batch", "LIST", "batch sizes, a,b,c or from:to (default 1,2,4,8,16,32; range 1..256)"},
    {"cores", "LIST", "core counts, one hardware type local-<N>c each (default 1)"},
    {"samples", "N", "latency samples kept per batch size (default 30; 1..10000)"},
    {"warmup", "N", "batches run and dropped before the samples (default 5; 0..1000)"},
    {"loads", "N", "cold starts measured per variant (default 3; 1..100)"},
    {"gap-ms", "MS",
     "idle time before each batch, as a lightly loaded server's worker waits between batches "
     "(default 0: back to back; 0..10000)"},
    {"gap-exponential", "",
     "draw each gap from an exponential distribution of mean --gap-ms (the idle times of "
     "Poisson arrivals) instead of --gap-ms every time"},
    {"slo-ms", "MS", "the task's default SLO written into the suite (default 50)"},
    {"variants", "LIST", "only these variants (default: all)"},
    {"help", "", "show this help"}};

void PrintMeasureHelp() {
  std::printf(
      "usage: sloserve profile measure --model-repository DIR [options]\n\n"
      "Measures every variant of the repository on this machine through the LibTorch\n"
      "executor and writes a profile suite (docs/profiles.md): raw latency samples per\n"
      "batch size and core count (after warm-up), the accuracy measured on the task's\n"
      "heldout.json, the median cold start (load + warm-up) and the resident memory. The\n"
      "simulator and every policy read the result like any other suite; `serve\n"
      "--model-repository DIR` schedules with DIR/<task>/profile.prof (a repository of\n"
      "several tasks: DIR/profile.prof, every task in one suite). docs/torch.md.\n\n"
      "options:\n%s",
      FlagsHelp(kMeasureFlags).c_str());
}

// "1,2,4" or "1:32" (every integer); each in [lo, hi].
StatusOr<std::vector<int>> IntList(const std::string& flag, const std::string& text, int lo,
                                   int hi) {
  std::vector<int> out;
  auto parse = [&](const std::string& item) -> StatusOr<int> {
    const std::optional<int64_t> v = ParseInteger(item);
    if (!v || *v < lo || *v > hi) {
      return InvalidArgumentError("--" + flag + ": '" + item + "' must be a whole number in " +
                                  std::to_string(lo) + ".." + std::to_string(hi));
    }
    return static_cast<int>(*v);
  };
  if (size_t colon = text.find(':'); colon != std::string::npos) {
    ASSIGN_OR_RETURN(int a, parse(text.substr(0, colon)));
    ASSIGN_OR_RETURN(int b, parse(text.substr(colon + 1)));
    if (b < a) return InvalidArgumentError("--" + flag + ": empty range " + text);
    for (int i = a; i <= b; ++i) out.push_back(i);
    return out;
  }
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    ASSIGN_OR_RETURN(int v, parse(item));
    out.push_back(v);
  }
  if (out.empty()) return InvalidArgumentError("--" + flag + ": empty list");
  return out;
}

StatusOr<int> IntFlag(const Args& args, const std::string& flag, int fallback, int lo, int hi) {
  ASSIGN_OR_RETURN(int64_t v, args.GetInt(flag, fallback));
  if (v < lo || v > hi) {
    return InvalidArgumentError("--" + flag + ": must be " + std::to_string(lo) + ".." +
                                std::to_string(hi) + ", got " + std::to_string(v));
  }
  return static_cast<int>(v);
}

// Without --out: DIR/<task>/profile.prof when there is none (what serve reads), else the
// first free profile-measured[-N].prof beside it, so a measurement never replaces a profile
// unasked (the committed models/digits/profile.prof was overwritten by every run, issue 35).
std::string NewProfilePath(const std::string& task_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;  // an unreadable path is taken as free; writing it then says why
  const std::string served = task_dir + "/profile.prof";
  if (!fs::exists(served, ec)) return served;
  std::string path = task_dir + "/profile-measured.prof";
  for (int n = 2; fs::exists(path, ec); ++n)
    path = task_dir + "/profile-measured-" + std::to_string(n) + ".prof";
  return path;
}

// True when `path` is a file git tracks in the checkout it lies in (`git ls-files
// --error-unmatch`); false when it is not, when it is outside any checkout or when git
// cannot be run.
bool TrackedByGit(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  const std::string name = p.filename().string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
  const char* argv[] = {"git", "-C",         dir.c_str(), "ls-files", "--error-unmatch",
                        "--",  name.c_str(), nullptr};
  pid_t pid = 0;
  const int spawned =
      posix_spawnp(&pid, "git", &quiet, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&quiet);
  if (spawned != 0) return false;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

Status Measure(const Args& args) {
  if (!args.positionals().empty())
    return InvalidArgumentError("unexpected argument '" + args.positionals()[0] + "'");
  if (!args.Has("model-repository"))
    return InvalidArgumentError("--model-repository DIR is required");
  ASSIGN_OR_RETURN(ModelRepository repo, LoadModelRepository(args.Get("model-repository")));
  MeasureOptions o;
  if (args.Has("batch")) {
    ASSIGN_OR_RETURN(o.batch_sizes, IntList("batch", args.Get("batch"), 1, 256));
  }
  if (args.Has("cores")) {
    ASSIGN_OR_RETURN(o.cores, IntList("cores", args.Get("cores"), 1, 1024));
  }
  ASSIGN_OR_RETURN(o.samples, IntFlag(args, "samples", 30, 1, 10000));
  ASSIGN_OR_RETURN(o.warmup, IntFlag(args, "warmup", 5, 0, 1000));
  ASSIGN_OR_RETURN(o.loads, IntFlag(args, "loads", 3, 1, 100));
  ASSIGN_OR_RETURN(double gap_ms, args.GetDouble("gap-ms", 0));
  if (!(gap_ms >= 0 && gap_ms <= 10000))
    return InvalidArgumentError("--gap-ms: must be in [0, 10000], got " + args.Get("gap-ms"));
  o.gap = MillisF(gap_ms);
  o.gap_exponential = args.Has("gap-exponential");
  if (o.gap_exponential && o.gap <= Duration(0))
    return InvalidArgumentError("--gap-exponential: needs --gap-ms above 0");
  ASSIGN_OR_RETURN(double slo_ms, args.GetDouble("slo-ms", 50));
  if (!(slo_ms > 0 && slo_ms <= 3.6e6))
    return InvalidArgumentError("--slo-ms: must be in (0, 3600000], got " + args.Get("slo-ms"));
  o.slo = MillisF(slo_ms);
  if (args.Has("variants")) {
    std::stringstream ss(args.Get("variants"));
    for (std::string v; std::getline(ss, v, ',');) {
      if (!repo.FindVariant(v))
        return InvalidArgumentError("--variants: no variant '" + v + "' in " + repo.root);
      o.variants.push_back(v);
    }
  }
  o.progress = [](const std::string& line) { std::fprintf(stderr, "measured %s\n", line.c_str()); };
  o.warning = [](const std::string& line) {
    std::fprintf(stderr, "sloserve profile measure: WARNING: %s\n", line.c_str());
  };
  // Where it goes, decided (and a tracked file refused) before the measurement.
  const std::string task_dir = ServedProfileDir(repo);
  const std::string out = args.Has("out") ? args.Get("out") : NewProfilePath(task_dir);
  if (args.Has("out") && !args.Has("force") && TrackedByGit(out)) {
    return FailedPreconditionError(
        "--out: " + out +
        " is tracked by git; pass --force to overwrite it, or name another file with --out");
  }
  ASSIGN_OR_RETURN(ProfileSuite suite, MeasureRepositoryProfile(repo, o));
  const std::string stem = std::filesystem::path(out).stem().string();
  const std::string base =
      repo.tasks.size() == 1
          ? repo.tasks.front().name
          : std::filesystem::path(repo.root).lexically_normal().filename().string();
  suite.set_name(!args.Has("out") || stem == "profile"
                     ? (base.empty() ? "repository" : base) + "-measured"
                     : stem);
  std::ofstream file(out);
  if (!file) return UnavailableError("--out: cannot write " + out);
  file << WriteProfileText(suite);
  std::fprintf(stderr, "wrote %zu variants to %s\n", suite.variants().size(), out.c_str());
  const std::string served = task_dir + "/profile.prof";
  if (out != served && !args.Has("out")) {
    std::fprintf(stderr,
                 "%s exists and was left as it is; `serve --model-repository` reads that one: "
                 "move %s there, or measure with --out %s%s\n",
                 served.c_str(), out.c_str(), served.c_str(),
                 TrackedByGit(served) ? " --force" : "");
  }
  return OkStatus();
}

}  // namespace

int ProfileMeasureCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("profile measure", argv, kMeasureFlags, PrintMeasureHelp, Measure, 0);
}

StatusOr<TorchServing> PrepareTorchServing(const std::string& repository_dir) {
  ASSIGN_OR_RETURN(ModelRepository loaded, LoadModelRepository(repository_dir));
  auto repo = std::make_shared<ModelRepository>(std::move(loaded));
  TorchServing s;
  // Several tasks are served together from one pool (issue 31): the deployment's task is
  // the first; the runtime serves every task its profile has on the workers' hardware.
  s.task = repo->tasks.front().name;
  for (const RepoTask& t : repo->tasks) s.tasks.push_back(t.name);
  s.repository_dir = repository_dir;
  for (const RepoTask& t : repo->tasks) {
    for (const RepoVariant& v : t.variants) s.model_files.emplace_back(v.name, v.model_path);
  }
  s.profile_path = ServedProfileDir(*repo) + "/profile.prof";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(s.profile_path, ec)) {
    return FailedPreconditionError(s.profile_path +
                                   " does not exist; measure it first: sloserve profile measure "
                                   "--model-repository " +
                                   repository_dir);
  }
  s.make_executor = [repo, slot = s.executor](
                        const ProfileSuite& suite,
                        PayloadStore* payloads) -> std::unique_ptr<WorkerExecutor> {
    auto e = std::make_unique<TorchExecutor>(repo.get(), &suite, payloads);
    *slot = e.get();
    return e;
  };
  return s;
}

Status CheckTorchCores(int total_cores, bool oversubscribe) {
  return CheckCoreBudget(total_cores, 0, oversubscribe,
                         [](const std::string& m) { std::fprintf(stderr, "%s\n", m.c_str()); });
}

Status PreloadTorchWorkers(const TorchServing& torch, const ProfileSuite& suite,
                           const std::vector<WorkerSpec>& workers) {
  auto* exec = dynamic_cast<TorchExecutor*>(*torch.executor);
  if (!exec) return InternalError("--model-repository: the runtime has no LibTorch executor");
  for (WorkerId w = 0; w < workers.size(); ++w) {
    const WorkerSpec& spec = workers[w];
    if (spec.preload_none) continue;
    std::vector<VariantId> load = spec.preload;
    if (load.empty()) {
      for (VariantId v = 0; v < suite.variants().size(); ++v) {
        if (!suite.BatchSizes(spec.hardware, v).empty()) load.push_back(v);
      }
    }
    std::string line;
    for (VariantId v : load) {
      StatusOr<Duration> t = exec->Preload(w, spec.hardware, v);
      if (!t.ok()) return t.status().WithPrefix("preloading " + suite.variants()[v].name);
      char item[128];
      std::snprintf(item, sizeof item, "%s%s %.1f ms", line.empty() ? "" : ", ",
                    suite.variants()[v].name.c_str(), ToMillis(*t));
      line += item;
    }
    std::fprintf(stderr, "sloserve: worker %s loaded (cold starts measured): %s\n",
                 spec.name.c_str(), line.c_str());
  }
  return OkStatus();
}

}  // namespace sloserve::cli::torch_plugin

extern "C" const sloserve::cli::TorchPluginApi* sloserve_torch_plugin_v1() {
  namespace p = sloserve::cli::torch_plugin;
  static const sloserve::cli::TorchPluginApi api = {
      .build = SLOSERVE_VERSION " " SLOSERVE_GIT_REVISION,
      .profile_measure = p::ProfileMeasureCommand,
      .prepare_serving = p::PrepareTorchServing,
      .check_cores = p::CheckTorchCores,
      .preload_workers = p::PreloadTorchWorkers,
      .make_lstm_forecaster = sloserve::MakeLstmForecaster,
  };
  return &api;
}

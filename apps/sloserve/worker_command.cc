// `sloserve worker --listen HOST:PORT [CONFIG.yaml] [--set ...] [--model-repository DIR]`:
// one remote worker process (docs/remote-workers.md). It runs an executor — the emulated
// one on the config's profile suite, LibTorch on a model repository, or both when the
// config's models name repositories (models[i].repository) — and executes
// the actions a `sloserve serve --remote-worker HOST:PORT` controller sends over gRPC.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "cli_args.h"
#include "commands.h"
#include "default_config.h"
#include "repository_models.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/config/model_config.h"
#include "sloserve/config/suite_resolver.h"
#include "sloserve/exec/profile_executor.h"
#include "sloserve/remote/process_setup.h"
#include "sloserve/remote/worker_server.h"
#include "stop_signals.h"
#include "torch_commands.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace worker_cmd {

const std::vector<FlagSpec> kFlags = {
    {"listen", "HOST:PORT", "address to serve the worker protocol on (port 0 = any free port)"},
    {"set", "KEY=VALUE", "override a config key (the controller's config: same suite)", true},
    {"model-repository", "DIR",
     "execute the repository's TorchScript variants with LibTorch (docs/torch.md) instead of "
     "emulating them"},
    {"allow-stale-profile", "",
     "with a config's repository models (models[i].repository): serve even when a model file "
     "changed since its profile was measured (warn only)"},
    {"threads", "N", "gRPC completion-queue threads (default 1: one thread wake-up per action)"},
    {"run-port", "PORT",
     "also take Runs on a TCP Run channel on this port of --listen's host (0 = any free port):"
     " a controller with server.worker_run_transport=tcp sends them there, at about a third"
     " of the gRPC Run stream's CPU per Run (docs/remote-workers.md). Plaintext: not with"
     " --tls-cert"},
    {"tls-cert", "FILE",
     "serve TLS with this PEM certificate (the controller: server.worker_tls_*)"},
    {"tls-key", "FILE", "the PEM key of --tls-cert"},
    {"tls-client-ca", "FILE",
     "with --tls-cert: accept only a controller presenting a certificate this CA signed"},
    {"duration", "SECONDS", "stop by itself after this long (default: run until SIGINT/SIGTERM)"},
    {"help", "", "show this help"},
};

void PrintHelp() {
  std::printf(
      "usage: sloserve worker --listen HOST:PORT [CONFIG.yaml] [options]\n\n"
      "A remote worker for `sloserve serve --remote-worker HOST:PORT` (docs/remote-workers.md).\n"
      "It executes the engine's actions (run a batch, load or unload a variant) sent over gRPC:\n"
      "emulated from the profile suite of CONFIG (the controller's config, or the embedded\n"
      "default), with LibTorch from --model-repository, or both: a CONFIG whose models name a\n"
      "repository (models[i].repository) runs those with LibTorch and the others emulated.\n"
      "The controller checks that both\n"
      "sides have the same suite. Prints 'listening on grpc://HOST:PORT' (grpcs:// with\n"
      "--tls-cert) once serving.\n\n"
      "options:\n%s",
      FlagsHelp(kFlags).c_str());
}

Status Run(const Args& args) {
  if (!args.Has("listen")) return InvalidArgumentError("--listen HOST:PORT is required");
  if (args.positionals().size() > 1)
    return InvalidArgumentError("expected at most one CONFIG.yaml");
  // Not given: 0, run until SIGINT/SIGTERM. A given 0 is refused like -1 (it ran for
  // ever; --help documents no "0 = until stopped").
  ASSIGN_OR_RETURN(double duration,
                   args.GetDoubleIn("duration", 0, {0, kMaxRunSeconds, true, "seconds"}));
  ASSIGN_OR_RETURN(double threads, args.GetDouble("threads", 1));
  if (threads < 1 || threads > 256 || threads != static_cast<int>(threads))
    return InvalidArgumentError("--threads: must be a whole number 1..256");
  ASSIGN_OR_RETURN(int64_t run_port, args.GetIntIn("run-port", -1, {0, 65535}));
  const sigset_t stop_signals = BlockStopSignals();

  std::vector<std::string> sets = args.GetAll("set");
  TorchServing torch;
  if (args.Has("model-repository")) {
    StatusOr<TorchServing> prepared = PrepareTorchServing(args.Get("model-repository"));
    if (!prepared.ok()) return prepared.status().WithPrefix("--model-repository");
    torch = std::move(*prepared);
    sets.insert(sets.begin(), {"suite=" + torch.profile_path, "task=" + torch.task});
  }
  ExperimentConfig config;
  if (args.positionals().empty()) {
    ASSIGN_OR_RETURN(config, ParseExperimentConfig(kDefaultServeConfig, kDefaultServeConfigName));
  } else {
    ASSIGN_OR_RETURN(config, LoadExperimentConfig(args.positionals()[0]));
  }
  if (torch.make_executor && !config.models.empty()) {
    return InvalidArgumentError(
        "--model-repository with a config that lists models: name the repository in its "
        "model instead (models[i].repository; the worker then runs it with LibTorch and the "
        "other models emulated)");
  }
  RETURN_IF_ERROR(ApplyOverrides(&config, sets));
  ASSIGN_OR_RETURN(RunSpec spec, RunSpecFromFlat(config.base, /*with_workload=*/false));
  // `models:` (docs/multi-model.md): the suite composed from them, as serve composes it,
  // so both sides number variants and hardware alike.
  ASSIGN_OR_RETURN(spec.models, ModelsFromFlat(config.models, config.base, spec));
  ASSIGN_OR_RETURN(ProfileSuite suite, ResolveRunSuite(spec));

  WorkerServer::Options options;
  options.listen = args.Get("listen");
  options.threads = static_cast<int>(threads);
  options.run_port = static_cast<int>(run_port);
  options.tls = {args.Get("tls-cert", ""), args.Get("tls-key", ""), args.Get("tls-client-ca", "")};
  if (options.tls.cert_file.empty() != options.tls.key_file.empty()) {
    return InvalidArgumentError("--tls-cert and --tls-key: give both or neither");
  }
  if (!options.tls.enabled() && !options.tls.client_ca_file.empty()) {
    return InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
  }
  WorkerServer::MakeExecutor make = torch.make_executor;
  const bool repository_models =
      std::any_of(spec.models.begin(), spec.models.end(),
                  [](const ModelSpec& m) { return !m.repository.empty(); });
  if (make) {
    options.executor_name = "torch";
    options.reads_inputs = true;
    options.holds_model = [](uint32_t) { return true; };
  } else if (repository_models) {
    // As serve runs them in its own process: LibTorch for the repository models'
    // variants, every other model emulated (repository_models.h).
    ASSIGN_OR_RETURN(std::shared_ptr<RepositoryModels> models,
                     PrepareRepositoryModels(spec.models, suite));
    RETURN_IF_ERROR(CheckRepositoryProfiles(
        *models, args.Has("allow-stale-profile"),
        [](const std::string& w) { std::fprintf(stderr, "sloserve worker: %s\n", w.c_str()); }));
    options.executor_name = "emulated+torch";
    options.reads_inputs = true;
    options.holds_model = RepositoryVariants(models);
    make = RepositoryModelsExecutor(models, spec.service, spec.seed);
  } else {
    make = [&spec](const ProfileSuite& s, PayloadStore*) -> std::unique_ptr<WorkerExecutor> {
      return std::make_unique<ProfileExecutor>(ServiceTimeModel(&s, spec.service, spec.seed));
    };
  }
  remote::SkipMutexDeadlockDetection();
  ASSIGN_OR_RETURN(auto server, WorkerServer::Create(options, &suite, make));
  ASSIGN_OR_RETURN(uint16_t port, server->Start());
  const std::string host = options.listen.substr(0, options.listen.rfind(':'));
  std::fprintf(stderr,
               "sloserve worker: %s executor, suite %s\nsloserve worker: listening on "
               "%s://%s:%u\n",
               options.executor_name.c_str(), suite.name().c_str(),
               options.tls.enabled() ? "grpcs" : "grpc", host.c_str(), port);
  if (server->run_port() != 0) {
    std::fprintf(stderr, "sloserve worker: TCP Run channel on %s:%u\n", host.c_str(),
                 server->run_port());
  }
  WaitForStopSignal(stop_signals, duration);
  server->Stop();
  std::fprintf(stderr,
               "sloserve worker: stopped after %lld actions (%lld Runs on the TCP Run channel)\n",
               static_cast<long long>(server->actions_done()),
               static_cast<long long>(server->tcp_runs_received()));
  return OkStatus();
}

}  // namespace worker_cmd

int WorkerCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("worker", argv, worker_cmd::kFlags, worker_cmd::PrintHelp, worker_cmd::Run,
                       1);
}

}  // namespace sloserve::cli

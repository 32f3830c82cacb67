// `sloserve serve [CONFIG.yaml] [--set key=value ...]`: the KServe v2 HTTP server.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <thread>

#include "cli_args.h"
#include "commands.h"
#include "profile_freshness.h"
#include "serve_setup.h"
#include "sloserve/remote/reply_queue.h"
#include "sloserve/report/run_table.h"
#include "sloserve/server/json_log.h"
#include "stop_signals.h"
#include "torch_commands.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace serve_cmd {

const std::vector<FlagSpec> kFlags = {
    {"set", "KEY=VALUE", "override a config key (e.g. workers=20; KEY= removes it)", true},
    {"host", "ADDR", "listen address (default from config: 127.0.0.1)"},
    {"port", "N", "listen port, 0 = any free port (default from config: 8000)"},
    {"http-port", "N", "same as --port"},
    {"grpc-port", "N",
     "also serve the Open Inference Protocol over gRPC on this port (docs/grpc.md); "
     "0 = off (default from config server.grpc_port: off)"},
    {"remote-worker", "HOST:PORT",
     "a `sloserve worker` process as one of the workers (docs/remote-workers.md); repeat for "
     "each; replaces the config's workers count",
     true},
    {"threads", "N",
     "HTTP io threads, each with its own event loop (default: the hardware threads, at most 16)"},
    {"duration", "SECONDS", "stop by itself after this long (default: run until SIGINT/SIGTERM)"},
    {"model-repository", "DIR",
     "execute the repository's TorchScript variants with LibTorch (docs/torch.md); schedules "
     "with DIR/<task>/profile.prof"},
    {"oversubscribe", "",
     "with --model-repository or a config's repository models: allow more workers' cores than "
     "the machine has"},
    {"allow-stale-profile", "",
     "with --model-repository or a config's repository models: serve even when a model file "
     "changed since `profile measure` (a warning instead of a refusal)"},
    {"log-format", "text|json",
     "json: log lines as JSON objects (ts, level, msg, ...) and one line per inference "
     "request with its request id, model, status, variant, worker and times (default text: "
     "no request log)"},
    {"json", "", "print the final metrics as JSON"},
    {"help", "", "show this help"},
};

void PrintHelp() {
  std::printf(
      "usage: sloserve serve [CONFIG.yaml] [options]\n\n"
      "Serves the config's profile suite over HTTP (and gRPC with --grpc-port), speaking the\n"
      "KServe v2 / Open Inference Protocol (docs/protocol.md). Each task is a model: POST\n"
      "/v2/models/{task}/infer with optional parameters {\"slo_ms\": N, \"app\": \"name\"};\n"
      "the response's parameters say which variant answered and its queue and compute\n"
      "microseconds. Without CONFIG the embedded default (examples/serve_image.yaml) is\n"
      "served. Stops on SIGINT/SIGTERM and prints the metrics.\n\n"
      "Workers: emulated by default (a batch holds its worker for a latency drawn from the\n"
      "profile); TorchScript models run by LibTorch with --model-repository (docs/torch.md);\n"
      "`sloserve worker` processes with --remote-worker, or any KServe v2 gRPC server (Triton,\n"
      "KServe, another serve) with --set server.kserve_workers=HOST:PORT,...\n"
      "(docs/remote-workers.md). A set of `sloserve worker`s that changes while serving:\n"
      "--set server.remote_workers_file=FILE (re-read when it changes) or\n"
      "--set server.remote_workers=dns:///NAME:PORT (every address of NAME; Kubernetes:\n"
      "docs/deploy.md).\n\n"
      "Environment: SLOSERVE_CACHE_DIR (RAMSIS policy sets generated at start; default\n"
      "~/.cache/sloserve/mdp), SLOSERVE_PROFILES_DIR (replaces the compiled-in suites),\n"
      "GRPC_POLL_STRATEGY (with remote or KServe workers serve sets 'poll' unless it is set;\n"
      "epoll1 is cheaper with about a thousand direct gRPC clients: docs/remote-workers.md).\n"
      "\noptions:\n%s",
      FlagsHelp(kFlags).c_str());
}

// One line of what is protected (docs/serve.md "Security"), so an operator sees at start
// whether load/unload are open and what needs the token.
std::string SecuritySummary(const HttpServer::Options& http) {
  const AccessOptions& a = http.access;
  std::string out = "security: ";
  if (!http.tls.enabled()) {
    out += "plain text (no TLS)";
  } else {
    out += http.tls.client_ca_file.empty() ? "TLS" : "TLS with client certificates";
  }
  out += a.model_control == ModelControl::kExplicit ? "; model control explicit"
                                                    : "; model control none (load/unload: 403)";
  if (a.admin_token.empty()) return out + "; no admin token";
  out += "; admin token for control, statistics";
  if (a.require_token_for_metrics) out += ", /metrics";
  if (a.require_token_for_infer) out += ", inference";
  return out;
}

Status Run(const Args& args) {
  if (args.positionals().size() > 1)
    return InvalidArgumentError("expected at most one CONFIG.yaml");
  std::vector<std::string> sets = args.GetAll("set");
  if (args.Has("host")) sets.push_back("server.host=" + args.Get("host"));
  if (args.Has("port")) sets.push_back("server.port=" + args.Get("port"));
  if (args.Has("http-port")) sets.push_back("server.port=" + args.Get("http-port"));
  if (args.Has("grpc-port")) sets.push_back("server.grpc_port=" + args.Get("grpc-port"));
  if (args.Has("threads")) sets.push_back("server.threads=" + args.Get("threads"));
  if (args.Has("remote-worker")) {
    if (args.Has("model-repository")) {
      return InvalidArgumentError(
          "--remote-worker with --model-repository: give the repository to each `sloserve "
          "worker` and the controller its profile (--set suite=DIR/<task>/profile.prof; a "
          "repository of several tasks: DIR/profile.prof)");
    }
    std::string list;
    for (const std::string& a : args.GetAll("remote-worker")) list += (list.empty() ? "" : ",") + a;
    sets.push_back("server.remote_workers=" + list);
  }
  const std::string log_format = args.Get("log-format", "text");
  if (log_format != "text" && log_format != "json") {
    return InvalidArgumentError("--log-format: '" + log_format + "' is not one of text, json");
  }
  const bool json_logs = log_format == "json";
  // The serve command's own lines; the rest of stderr (errors, start-up progress) is text.
  auto say = [json_logs](const std::string& msg) {
    if (json_logs) {
      std::fprintf(stderr, "%s\n", JsonLogLine("info", msg).c_str());
    } else {
      std::fprintf(stderr, "sloserve: %s\n", msg.c_str());
    }
  };
  // Not given: 0, run until SIGINT/SIGTERM. A given 0 is refused like -1 (it ran for
  // ever; --help documents no "0 = until stopped").
  ASSIGN_OR_RETURN(double duration,
                   args.GetDoubleIn("duration", 0, {0, kMaxRunSeconds, true, "seconds"}));
  // Before any thread starts (the runtime's offline pool starts in BuildServeSetup).
  const sigset_t stop_signals = BlockStopSignals();
  const sigset_t reload_signal = BlockReloadSignal();
  // Real models: the repository's measured profile and task go first, so the config's
  // and --set's keys still win; its input shape replaces any declared one.
  TorchServing torch;
  if (args.Has("model-repository")) {
    StatusOr<TorchServing> prepared = PrepareTorchServing(args.Get("model-repository"));
    if (!prepared.ok()) return prepared.status().WithPrefix("--model-repository");
    torch = std::move(*prepared);
    std::vector<std::string> first = {"suite=" + torch.profile_path, "task=" + torch.task,
                                      "server.input_shape="};
    if (args.positionals().empty()) {
      // The embedded default's deployment is for ramsis-image; serve one 1-core worker
      // on the measured hardware with the task's SLO instead.
      first.insert(first.end(), {"hardware=", "workers=1", "slo_ms="});
    }
    sets.insert(sets.begin(), first.begin(), first.end());
  }
  ASSIGN_OR_RETURN(
      ServeSetup setup,
      BuildServeSetup(args.positionals().empty() ? "" : args.positionals()[0], sets,
                      /*deferred_init=*/true, torch.make_executor, args.Has("oversubscribe")));
  if (!torch.make_executor && !setup.repository_models &&
      (args.Has("oversubscribe") || args.Has("allow-stale-profile"))) {
    return InvalidArgumentError(
        std::string(args.Has("oversubscribe") ? "--oversubscribe" : "--allow-stale-profile") +
        ": only with --model-repository or a model from a repository (models[i].repository)");
  }
  if (setup.repository_models) {
    RETURN_IF_ERROR(StartRepositoryModels(*setup.repository_models, *setup.suite,
                                          setup.runtime->deployment().workers,
                                          {.oversubscribe = args.Has("oversubscribe"),
                                           .allow_stale_profile = args.Has("allow-stale-profile"),
                                           .warn = [&](const std::string& m) { say(m); }}));
  }
  if (torch.make_executor) {
    RETURN_IF_ERROR(CheckProfileFreshness({.suite = setup.suite.get(),
                                           .profile_path = torch.profile_path,
                                           .repository_dir = torch.repository_dir,
                                           .model_files = torch.model_files,
                                           .warn_only = args.Has("allow-stale-profile"),
                                           .warn = [&](const std::string& m) { say(m); }}));
    int cores = 0;
    for (const WorkerSpec& w : setup.runtime->deployment().workers)
      cores += setup.suite->hardware()[w.hardware].cores;
    RETURN_IF_ERROR(CheckTorchCores(cores, args.Has("oversubscribe")));
    // The engine starts with its preloaded variants resident: load them for real first.
    RETURN_IF_ERROR(PreloadTorchWorkers(torch, *setup.suite, setup.runtime->deployment().workers));
  }

  // Bind first, then initialise the policies on the engine thread: the port answers at
  // once (/v2/health/ready is 400, not ready, with the progress as the reason) while, e.g., a
  // RAMSIS policy set is generated.
  if (json_logs) {
    setup.http.access_log = [](const std::string& line) {
      std::fprintf(stderr, "%s\n", line.c_str());  // one call per line: lines do not interleave
    };
  }
  ASSIGN_OR_RETURN(auto server, HttpServer::Create(setup.http, setup.runtime.get()));
  ASSIGN_OR_RETURN(uint16_t port, server->Start());
  say("serving " + setup.summary);
  const bool tls = setup.http.tls.enabled();
  say(std::string("listening on ") + (tls ? "https://" : "http://") + setup.http.host + ":" +
      std::to_string(port) + " (KServe v2; Ctrl-C to stop)");
  say(SecuritySummary(setup.http));
  // HTTPS: SIGHUP re-reads the certificate for new connections (docs/serve.md "TLS").
  // Without TLS, SIGHUP keeps its default action (the process ends), as before.
  std::atomic<bool> stopping{false};
  std::thread reload_watch;
  // The gRPC server (made below, before anything is served) re-reads them too; declared
  // here, it outlives the watch (joined first).
  std::unique_ptr<GrpcServer> grpc;
  std::atomic<GrpcServer*> grpc_to_reload{nullptr};
  if (tls) {
    reload_watch = std::thread([&, srv = server.get()] {
      while (!stopping.load()) {
        timespec tick{0, 200'000'000};  // looks at `stopping` this often
        if (sigtimedwait(&reload_signal, nullptr, &tick) != SIGHUP) continue;
        Status reloaded = srv->ReloadTls();
        GrpcServer* g = grpc_to_reload.load();
        if (reloaded.ok() && g != nullptr) reloaded = g->ReloadTls().WithPrefix("gRPC port");
        say(reloaded.ok()
                ? std::string("SIGHUP: TLS certificate re-read; new HTTPS connections use it") +
                      (g != nullptr ? ", new gRPC connections within a second" : "")
                : "SIGHUP: " + reloaded.message() + " (keeping the previous certificate)");
      }
    });
  } else {
    pthread_sigmask(SIG_UNBLOCK, &reload_signal, nullptr);
  }
  // Joined before the server goes, on every way out of Run.
  struct JoinReloadWatch {
    std::atomic<bool>& stopping;
    std::thread& watch;
    ~JoinReloadWatch() {
      stopping.store(true);
      if (watch.joinable()) watch.join();
    }
  } join_reload_watch{stopping, reload_watch};
  if (setup.grpc_enabled) {
    ASSIGN_OR_RETURN(grpc, GrpcServer::Create(setup.grpc, setup.runtime.get()));
    ASSIGN_OR_RETURN(uint16_t grpc_port, grpc->Start());
    if (tls) grpc_to_reload.store(grpc.get());
    say(std::string("listening on ") + (tls ? "grpcs://" : "grpc://") + setup.grpc.host + ":" +
        std::to_string(grpc_port) + " (inference.GRPCInferenceService)");
    // Remote workers' replies are read on the gRPC queue thread, which then answers them
    // itself when the engine thread is idle, as it steps for the requests it reads: at
    // light load no hand-off to the engine thread (docs/remote-workers.md "Threads").
    if (setup.remote != nullptr) setup.remote->DrainOn(grpc->queue());
  }
  // Without a gRPC server the same, on a queue with a thread of its own (thread
  // "remote-replies"): the io threads step for the requests they read and write the Runs,
  // and that thread answers the replies; the engine thread is not woken per request.
  std::unique_ptr<remote::ReplyQueue> remote_queue;
  if (setup.remote != nullptr && !grpc) {
    remote_queue = std::make_unique<remote::ReplyQueue>();
    remote_queue->StartThread();
    setup.remote->DrainOn(remote_queue->cq());
  }
  // Before the queue they are on shuts down (with the engine stopped): the remote workers'
  // calls leave it (RemoteExecutor::LeaveQueue).
  auto stop_grpc_and_queues = [&] {
    if (setup.remote != nullptr) setup.remote->LeaveQueue();
    remote_queue.reset();
    if (grpc) grpc->Stop();
  };
  setup.runtime->Start();

  // A failed start (e.g. a policy that cannot initialise) ends the process like a signal.
  Status init_status;
  std::thread init_watch([&] {
    init_status = setup.runtime->WaitUntilInitialized();
    if (init_status.ok()) {
      say("ready");
    } else {
      kill(getpid(), SIGTERM);
    }
  });
  WaitForStopSignal(stop_signals, duration);
  if (!setup.runtime->Initialized()) {
    // Stopped during start-up: no request was accepted, and policy generation cannot be
    // interrupted; leave without waiting for it.
    say("stopped during start-up");
    std::fflush(stderr);
    std::_Exit(130);
  }
  init_watch.join();
  if (!init_status.ok()) {
    stop_grpc_and_queues();
    server->Stop();
    return init_status.WithPrefix("start-up failed");
  }
  say("stopping (a second SIGINT/SIGTERM exits at once)");
  // Draining is bounded, but an operator who signals again means "now".
  std::thread([stop_signals, say] {
    int again = 0;
    sigwait(&stop_signals, &again);
    say("second signal: exiting without draining");
    std::fflush(stderr);
    std::_Exit(130);
  }).detach();
  // The engine drains first (up to server.drain_s, then 503 for what is left), so the
  // HTTP server's stop, which waits for every in-flight answer, is prompt.
  setup.runtime->Stop(setup.drain);
  stop_grpc_and_queues();
  server->Stop();
  MetricsSummary m = setup.runtime->FinalSummary();
  if (args.Has("json")) {
    std::cout << SummaryJson(m).dump(2) << std::endl;
  } else {
    std::cout << SummaryText(m);
  }
  return OkStatus();
}

}  // namespace serve_cmd

int ServeCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("serve", argv, serve_cmd::kFlags, serve_cmd::PrintHelp, serve_cmd::Run, 1);
}

}  // namespace sloserve::cli

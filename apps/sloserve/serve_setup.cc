#include "serve_setup.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <thread>

#include "default_config.h"
#include "git_revision.h"
#include "remote_setup.h"
#include "sloserve/config/engine_options.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/config/model_config.h"
#include "sloserve/config/server_config.h"
#include "sloserve/config/suite_resolver.h"
#include "sloserve/core/declared_key.h"
#include "sloserve/grpc/tls_credentials.h"
#include "sloserve/remote/process_setup.h"

namespace sloserve::cli {
namespace {

// Model control and the admin token (docs/serve.md "Security"), for both frontends.
StatusOr<AccessOptions> ParseAccess(const ServerConfig& c) {
  AccessOptions access;
  access.model_control =
      c.model_control == "explicit" ? ModelControl::kExplicit : ModelControl::kNone;
  if (!c.admin_token_file.empty()) {
    ASSIGN_OR_RETURN(access.admin_token, ReadTokenFile(c.admin_token_file));
  }
  access.require_token_for_infer = c.require_token_for_infer;
  access.require_token_for_metrics = c.require_token_for_metrics;
  RETURN_IF_ERROR(AccessControl::Validate(access));
  return access;
}

}  // namespace

StatusOr<std::vector<int64_t>> ParseShapeList(const std::string& text) {
  std::vector<int64_t> shape;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const std::optional<int64_t> v = ParseInteger(item);
    if (!v || *v < -1 || *v == 0) {
      return InvalidArgumentError("shape '" + text +
                                  "': expected comma-separated dimensions (>= 1, or -1 for any)");
    }
    shape.push_back(*v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return shape;
}

StatusOr<ServeSetup> BuildServeSetup(
    const std::string& config_path, const std::vector<std::string>& sets, bool deferred_init,
    std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>
        make_executor,
    bool oversubscribe) {
  remote::SkipMutexDeadlockDetection();  // gRPC's mutexes (the port's, remote workers')
  ExperimentConfig config;
  if (config_path.empty()) {
    ASSIGN_OR_RETURN(config, ParseExperimentConfig(kDefaultServeConfig, kDefaultServeConfigName));
  } else {
    ASSIGN_OR_RETURN(config, LoadExperimentConfig(config_path));
  }
  RETURN_IF_ERROR(ApplyOverrides(&config, sets));
  if (make_executor && !config.models.empty()) {
    return InvalidArgumentError(
        "--model-repository serves a repository instead of the config's suite, and this config "
        "lists models: name the repository in its model instead (models[i].repository, "
        "docs/torch.md)");
  }
  if (!config.sweep.empty() || !config.policies.empty()) {
    return InvalidArgumentError("serve runs one configuration: remove 'sweep:' and 'policies:'");
  }
  const FlatConfig& f = config.base;
  // Every server.* key is declared (config/server_config.h) and was checked when the
  // config was parsed; this reads them typed and range-checked.
  ASSIGN_OR_RETURN(const ServerConfig sc, ParseServerConfig(f));
  ASSIGN_OR_RETURN(RunSpec spec, RunSpecFromFlat(f, /*with_workload=*/false));
  // Checked before the engine starts: a bad token file should not wait for the workers.
  ASSIGN_OR_RETURN(AccessOptions access, ParseAccess(sc));
  // TLS for both ports (docs/serve.md "Security"); the files are read when the servers
  // are created.
  TlsFiles tls;
  tls.cert_file = sc.tls_cert_file;
  tls.key_file = sc.tls_key_file;
  tls.client_ca_file = sc.tls_client_ca_file;
  RETURN_IF_ERROR(ValidateTlsFiles(tls));

  ServeSetup setup;
  // `models:` (docs/multi-model.md): serve every model, the suite composed from them.
  ASSIGN_OR_RETURN(spec.models, ModelsFromFlat(config.models, f, spec));
  ASSIGN_OR_RETURN(ProfileSuite suite, ResolveRunSuite(spec));
  setup.suite = std::make_unique<ProfileSuite>(std::move(suite));

  RuntimeOptions ro;
  ro.deployment.task = spec.task;
  ro.deployment.hardware = spec.hardware;
  ro.deployment.workers = spec.workers;
  // A multi-model deployment's SLOs are its models' (each task's default in the suite).
  ro.deployment.slo = spec.models.empty() ? spec.slo : Duration(0);
  ro.deployment.preload = spec.preload;
  ro.deployment.workers_per_machine = spec.workers_per_machine;
  ro.policy = spec.policy;
  for (const ModelSpec& m : spec.models) {
    if (m.policy) ro.model_policies.emplace_back(m.name, *m.policy);
  }
  ro.service = spec.service;
  ro.seed = spec.seed;
  ro.plan_interval = spec.plan_interval;
  ro.deferred_init = deferred_init;
  ro.make_executor = std::move(make_executor);
  // The same engine options as sim's (config/engine_options.h); serve's queue bounds
  // come from server.max_queue.
  ro.admission = EngineOptionsFor(spec, Face::kServe).admission;
  ro.early_shed = sc.early_shed;
  ro.max_queue = static_cast<size_t>(sc.max_queue);
  // Input and output tensors of the queries in the system (beyond it: 429).
  ro.payload_bytes = static_cast<size_t>(sc.payload_mb * 1024 * 1024);
  if (!sc.input_shape.empty()) {
    ASSIGN_OR_RETURN(ro.input_shape, ParseShapeList(sc.input_shape));
  }
  // Remote workers (docs/remote-workers.md): one engine worker per `sloserve worker`.
  auto connected = std::make_shared<Status>();
  auto remote_executor = std::make_shared<RemoteExecutor*>(nullptr);
  const bool has_remote = !sc.remote_workers.empty() || !sc.remote_workers_file.empty();
  const bool has_kserve = !sc.kserve_workers.empty();
  if (has_remote && has_kserve) {
    return InvalidArgumentError(
        "server.remote_workers and server.kserve_workers: use one kind of worker");
  }
  // Timing (docs/remote-workers.md "Timing options"); each range-checked with its key.
  const double call_ms = sc.remote_call_timeout_ms;
  const double backoff_ms = sc.remote_reconnect_backoff_ms;
  const double interval_ms = sc.remote_health_interval_ms;  // health checks, both kinds
  const double health_ms = sc.remote_health_timeout_ms;
  const int failures = sc.remote_failures_to_down;
  // TLS to either kind of worker (docs/remote-workers.md "TLS"): read once, here.
  std::shared_ptr<::grpc::ChannelCredentials> worker_credentials;
  TlsClientFiles worker_tls;
  worker_tls.ca_file = sc.worker_tls_ca_file;
  worker_tls.cert_file = sc.worker_tls_cert_file;
  worker_tls.key_file = sc.worker_tls_key_file;
  if (worker_tls.enabled() && sc.worker_run_transport == "tcp") {
    return InvalidArgumentError(
        "server.worker_run_transport=tcp: the TCP Run channel is plaintext; with "
        "server.worker_tls_* the Runs must go on the workers' TLS gRPC Run stream (grpc)");
  }
  if (worker_tls.enabled()) {
    ASSIGN_OR_RETURN(worker_credentials,
                     grpc_protocol::ChannelTlsCredentials(
                         worker_tls, {"server.worker_tls_cert_file", "server.worker_tls_key_file",
                                      "server.worker_tls_ca_file"}));
  }
  // Either kind of worker: one wake-up per reply (the engine thread polls the workers'
  // connections itself, docs/remote-workers.md "Threads").
  const bool polls_own_queue = has_remote || has_kserve;
  if (polls_own_queue) remote::PreferOwnQueuePolling();
  if (has_remote) {
    RemoteExecutorOptions options;
    RETURN_IF_ERROR(ParseRemoteWorkerSet(sc.remote_workers, sc.remote_workers_file,
                                         static_cast<size_t>(sc.remote_worker_slots), &options));
    options.health_interval = MillisF(interval_ms);
    options.health_timeout = MillisF(health_ms);
    options.failures_to_down = failures;
    options.connect_timeout = SecondsF(sc.remote_connect_timeout_s);
    options.action_timeout = MillisF(call_ms);
    options.reconnect_backoff = MillisF(backoff_ms);
    options.credentials = worker_credentials;
    options.tcp_runs = sc.worker_run_transport == "tcp";
    ro.deployment.workers = static_cast<int>(options.addresses.size());
    ro.worker_addresses = options.addresses;
    ro.make_executor = RemoteExecutorFactory(std::move(options), connected, remote_executor);
  } else if (has_kserve) {
    // Any KServe v2 gRPC server as a worker: one ModelInfer per batch.
    KServeExecutorOptions options;
    ASSIGN_OR_RETURN(options.addresses,
                     ParseRemoteWorkers(sc.kserve_workers, "server.kserve_workers"));
    if (!sc.kserve_model.empty()) options.model = sc.kserve_model;
    options.call_timeout = MillisF(call_ms);
    options.reconnect_backoff = MillisF(backoff_ms);
    options.health_interval = MillisF(interval_ms);
    options.health_timeout = MillisF(health_ms);
    options.failures_to_down = failures;
    options.credentials = worker_credentials;
    ro.deployment.workers = static_cast<int>(options.addresses.size());
    ro.worker_addresses = options.addresses;
    ro.make_executor = KServeExecutorFactory(std::move(options));
  }
  // LibTorch models among the emulated ones (models[i].repository): one pool, an executor
  // per model; in this process, or on `sloserve worker`s given the same config, which run
  // them as this process would.
  const bool repository_models =
      std::any_of(spec.models.begin(), spec.models.end(),
                  [](const ModelSpec& m) { return !m.repository.empty(); });
  if (repository_models && has_kserve) {
    return InvalidArgumentError(
        "server.kserve_workers with a model from a repository (models[i].repository): run it "
        "in serve's process or on `sloserve worker`s (server.remote_workers)");
  }
  if (repository_models && !has_remote) {
    ASSIGN_OR_RETURN(setup.repository_models, PrepareRepositoryModels(spec.models, *setup.suite));
    ro.make_executor = RepositoryModelsExecutor(setup.repository_models, ro.service, ro.seed);
  }
  // LibTorch workers in this process share its machine's cores: a planner's later workers
  // of those types are bounded by them too (the start is checked in serve_command).
  if (!oversubscribe && !has_remote && !has_kserve && (make_executor || setup.repository_models)) {
    std::set<HardwareId> torch_types;
    for (HardwareId h = 0; h < setup.suite->hardware().size() && make_executor; ++h)
      torch_types.insert(h);
    if (setup.repository_models) {
      for (const RepositoryModel& r : *setup.repository_models) {
        for (const auto& [ours, theirs] : r.hardware) torch_types.insert(ours);
      }
    }
    const int machine = static_cast<int>(std::thread::hardware_concurrency());
    ro.max_workers_of_type.assign(setup.suite->hardware().size(), -1);
    for (HardwareId h : torch_types) {
      ro.max_workers_of_type[h] = machine / std::max(1, setup.suite->hardware()[h].cores);
    }
  }
  ASSIGN_OR_RETURN(setup.runtime, EngineRuntime::Create(setup.suite.get(), ro));
  RETURN_IF_ERROR(*connected);
  // The engine starts with variants resident on its workers: load them on the processes.
  setup.remote = *remote_executor;
  if (*remote_executor != nullptr) {
    RETURN_IF_ERROR(
        PreloadRemoteWorkers(*remote_executor, *setup.suite, setup.runtime->deployment().workers));
  }
  // One set of request histograms and counters for both frontends: /metrics and the
  // statistics extension count gRPC requests like HTTP ones.
  const std::vector<TaskInfo> models = setup.runtime->Tasks();
  std::vector<Duration> slos = {setup.runtime->deployment().slo};
  for (const TaskInfo& t : models) slos.push_back(t.default_slo);
  // Latency histogram bounds: dense around the SLOs served, unless the config lists them.
  std::vector<double> buckets = LatencyBucketsForSlos(slos);
  if (sc.latency_buckets) {
    buckets = *sc.latency_buckets;
    RETURN_IF_ERROR(CheckLatencyBuckets(buckets).WithPrefix("server.latency_buckets"));
  }
  setup.http.request_metrics = std::make_shared<RequestMetrics>(models, buckets);
  setup.grpc.request_metrics = setup.http.request_metrics;
  setup.http.build_revision = SLOSERVE_GIT_REVISION;
  setup.http.access = access;
  setup.grpc.access = std::move(access);
  setup.http.tls = tls;
  setup.grpc.tls = std::move(tls);

  setup.http.host = sc.host;
  setup.http.port = static_cast<uint16_t>(sc.port);
  setup.http.threads = sc.threads.value_or(HttpServer::DefaultThreads());
  setup.http.max_body_bytes = static_cast<size_t>(sc.max_body_mb * 1024 * 1024);
  setup.http.max_slo = MillisF(sc.max_slo_ms);
  setup.http.max_connections = static_cast<size_t>(sc.max_connections);
  setup.drain = SecondsF(sc.drain_s);
  setup.http.drain_timeout = std::max(setup.drain, Seconds(1));
  // gRPC (docs/grpc.md): same host, its own port; shares the runtime with HTTP.
  setup.grpc_enabled = sc.grpc_port > 0;
  setup.grpc.host = setup.http.host;
  setup.grpc.port = static_cast<uint16_t>(sc.grpc_port);
  // With remote or KServe workers gRPC polls per queue (remote::PreferOwnQueuePolling),
  // where more than one thread on the inference server's queues would each wake for every
  // event of its connections: one thread by default then.
  setup.grpc.threads = sc.grpc_threads.value_or(polls_own_queue ? 1 : 2);
  setup.grpc.max_in_flight = sc.grpc_max_in_flight;
  setup.grpc.max_message_bytes = setup.http.max_body_bytes;
  setup.grpc.max_slo = setup.http.max_slo;
  setup.grpc.drain_timeout = setup.http.drain_timeout;
  // Slow clients and memory held by request bodies (docs/serve.md, "Connection limits").
  setup.http.idle_timeout = SecondsF(sc.idle_timeout_s);
  setup.http.header_timeout = SecondsF(sc.header_timeout_s);
  setup.http.body_timeout = SecondsF(sc.body_timeout_s);
  setup.http.min_body_rate = std::max<size_t>(1, static_cast<size_t>(sc.min_body_rate_kib * 1024));
  setup.http.max_inflight_body_bytes = static_cast<size_t>(sc.inflight_body_mb * 1024 * 1024);

  const Deployment& d = setup.runtime->deployment();
  // "60 x n1-4cpu", or per type in mix order: "1 x g4dn.xlarge + 3 x r5n.large".
  std::string workers;
  for (size_t i = 0; i < d.workers.size();) {
    size_t j = i;
    while (j < d.workers.size() && d.workers[j].hardware == d.workers[i].hardware) ++j;
    if (!workers.empty()) workers += " + ";
    workers += std::to_string(j - i) + " x " + setup.suite->hardware()[d.workers[i].hardware].name;
    i = j;
  }
  char buf[512];
  // Several models served from the pool: named (the first 8), with how many.
  std::string task = "task " + setup.suite->tasks()[d.task].name;
  if (const std::vector<TaskInfo> served = setup.runtime->Tasks(); served.size() > 1) {
    std::string names;
    for (size_t i = 0; i < served.size() && i < 8; ++i) names += (i ? ", " : "") + served[i].name;
    task = std::to_string(served.size()) + " models (" + names +
           (served.size() > 8 ? ", ...)" : ")") + ", " + task;
  }
  std::snprintf(buf, sizeof buf, "suite %s, %s, %s workers, policy %s, SLO %.0f ms",
                setup.suite->name().c_str(), task.c_str(), workers.c_str(),
                spec.policy.Label().c_str(), ToMillis(d.slo));
  setup.summary = buf;
  return setup;
}

}  // namespace sloserve::cli

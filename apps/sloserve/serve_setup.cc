#include "serve_setup.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "default_config.h"
#include "git_revision.h"
#include "remote_setup.h"
#include "sloserve/core/did_you_mean.h"
#include "sloserve/grpc/tls_credentials.h"
#include "sloserve/remote/process_setup.h"
#include "sloserve/sim/experiment_config.h"
#include "sloserve/sim/suite_resolver.h"

namespace sloserve::cli {
namespace {

// A server.* number in [lo, hi]: finite (nan and inf are refused, not cast), and a
// whole number when `integer`. The error names the key, the range and the value.
StatusOr<double> ServerNumber(const FlatConfig& f, const std::string& key, double fallback,
                              double lo, double hi, bool integer = false) {
  auto it = f.find(key);
  if (it == f.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(it->second.c_str(), &end);
  const bool number = !it->second.empty() && *end == '\0' && errno == 0 && std::isfinite(v);
  if (!number || v < lo || v > hi || (integer && v != std::floor(v))) {
    char range[96];
    std::snprintf(range, sizeof range, "%s%.10g..%.10g", integer ? "a whole number " : "", lo, hi);
    return InvalidArgumentError("'" + key + "': must be " + range + ", got \"" + it->second + "\"");
  }
  return v;
}

// A server.* switch: true or false.
StatusOr<bool> ServerBool(const FlatConfig& f, const std::string& key, bool fallback) {
  auto it = f.find(key);
  if (it == f.end()) return fallback;
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  return InvalidArgumentError("'" + key + "': must be true or false, got \"" + it->second + "\"");
}

// Model control and the admin token (docs/serve.md "Security"), for both frontends.
StatusOr<AccessOptions> ParseAccess(const FlatConfig& f) {
  AccessOptions access;
  if (auto it = f.find("server.model_control"); it != f.end()) {
    if (it->second != "none" && it->second != "explicit") {
      return InvalidArgumentError("'server.model_control': must be none or explicit, got \"" +
                                  it->second + "\"");
    }
    access.model_control = it->second == "explicit" ? ModelControl::kExplicit : ModelControl::kNone;
  }
  if (auto it = f.find("server.admin_token_file"); it != f.end()) {
    ASSIGN_OR_RETURN(access.admin_token, ReadTokenFile(it->second));
  }
  ASSIGN_OR_RETURN(access.require_token_for_infer,
                   ServerBool(f, "server.require_token_for_infer", false));
  ASSIGN_OR_RETURN(access.require_token_for_metrics,
                   ServerBool(f, "server.require_token_for_metrics", false));
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
    char* end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < -1 || v == 0) {
      return InvalidArgumentError("shape '" + text +
                                  "': expected comma-separated dimensions (>= 1, or -1 for any)");
    }
    shape.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return shape;
}

StatusOr<ServeSetup> BuildServeSetup(
    const std::string& config_path, const std::vector<std::string>& sets, bool deferred_init,
    std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>
        make_executor) {
  remote::SkipMutexDeadlockDetection();  // gRPC's mutexes (the port's, remote workers')
  ExperimentConfig config;
  if (config_path.empty()) {
    ASSIGN_OR_RETURN(config, ParseExperimentConfig(kDefaultServeConfig, kDefaultServeConfigName));
  } else {
    ASSIGN_OR_RETURN(config, LoadExperimentConfig(config_path));
  }
  RETURN_IF_ERROR(ApplyOverrides(&config, sets));
  if (!config.sweep.empty() || !config.policies.empty()) {
    return InvalidArgumentError("serve runs one configuration: remove 'sweep:' and 'policies:'");
  }
  const FlatConfig& f = config.base;
  for (const auto& [k, v] : f) {
    if (k.rfind("server.", 0) != 0) continue;
    // clang-format off
    static const std::vector<std::string> kServerKeys = {
        "server.host",        "server.port",       "server.threads",
        "server.max_body_mb", "server.max_slo_ms", "server.max_queue",
        "server.input_shape", "server.payload_mb", "server.max_connections",
        "server.drain_s",     "server.idle_timeout_s", "server.header_timeout_s",
        "server.body_timeout_s", "server.min_body_rate_kib", "server.inflight_body_mb",
        "server.grpc_port",   "server.grpc_threads", "server.grpc_max_in_flight",
        "server.remote_workers", "server.remote_health_interval_ms",
        "server.remote_health_timeout_ms", "server.remote_failures_to_down",
        "server.remote_call_timeout_ms", "server.remote_connect_timeout_s",
        "server.remote_reconnect_backoff_ms", "server.kserve_workers", "server.kserve_model",
        "server.early_shed", "server.latency_buckets", "server.model_control",
        "server.admin_token_file", "server.require_token_for_infer",
        "server.require_token_for_metrics", "server.tls_cert_file", "server.tls_key_file",
        "server.tls_client_ca_file", "server.worker_tls_ca_file", "server.worker_tls_cert_file",
        "server.worker_tls_key_file", "server.remote_workers_file", "server.remote_worker_slots"};
    // clang-format on
    if (std::find(kServerKeys.begin(), kServerKeys.end(), k) == kServerKeys.end()) {
      return InvalidArgumentError("unknown key '" + k + "' (" + DidYouMean(k, kServerKeys) +
                                  "server keys: " + JoinNames(kServerKeys) +
                                  "; see docs/serve.md)");
    }
  }
  ASSIGN_OR_RETURN(RunSpec spec, RunSpecFromFlat(f, /*with_workload=*/false));
  // Checked before the engine starts: a bad token file should not wait for the workers.
  ASSIGN_OR_RETURN(AccessOptions access, ParseAccess(f));
  // TLS for both ports (docs/serve.md "Security"); the files are read when the servers
  // are created.
  TlsFiles tls;
  if (auto it = f.find("server.tls_cert_file"); it != f.end()) tls.cert_file = it->second;
  if (auto it = f.find("server.tls_key_file"); it != f.end()) tls.key_file = it->second;
  if (auto it = f.find("server.tls_client_ca_file"); it != f.end()) tls.client_ca_file = it->second;
  RETURN_IF_ERROR(ValidateTlsFiles(tls));

  ServeSetup setup;
  ASSIGN_OR_RETURN(ProfileSuite suite, ResolveSuite(spec.suite));
  setup.suite = std::make_unique<ProfileSuite>(std::move(suite));

  RuntimeOptions ro;
  ro.deployment.task = spec.task;
  ro.deployment.hardware = spec.hardware;
  ro.deployment.workers = spec.workers;
  ro.deployment.slo = spec.slo;
  ro.deployment.preload = spec.preload;
  ro.deployment.workers_per_machine = spec.workers_per_machine;
  ro.policy = spec.policy;
  ro.service = spec.service;
  ro.seed = spec.seed;
  ro.plan_interval = spec.plan_interval;
  ro.deferred_init = deferred_init;
  ro.make_executor = std::move(make_executor);
  // Overload protection is on when serving unless the config says engine.admission: off.
  ro.admission.enabled = spec.admission.value_or(true);
  ro.admission.max_queued_rows = spec.admission_queue;
  ro.admission.priority_levels = spec.priority_levels;
  ro.admission.default_priority = spec.priority_default;
  if (auto it = f.find("server.early_shed"); it != f.end()) {
    if (it->second != "on" && it->second != "off")
      return InvalidArgumentError("'server.early_shed': must be on or off, got \"" + it->second +
                                  "\"");
    ro.early_shed = it->second == "on";
  }
  ASSIGN_OR_RETURN(double max_queue, ServerNumber(f, "server.max_queue", 100000, 1, 1e8, true));
  ro.max_queue = static_cast<size_t>(max_queue);
  // Input and output tensors of the queries in the system (beyond it: 429).
  ASSIGN_OR_RETURN(double payload_mb, ServerNumber(f, "server.payload_mb", 256, 1, 1048576));
  ro.payload_bytes = static_cast<size_t>(payload_mb * 1024 * 1024);
  if (auto it = f.find("server.input_shape"); it != f.end()) {
    ASSIGN_OR_RETURN(ro.input_shape, ParseShapeList(it->second));
  }
  // Remote workers (docs/remote-workers.md): one engine worker per `sloserve worker`.
  auto connected = std::make_shared<Status>();
  auto remote_executor = std::make_shared<RemoteExecutor*>(nullptr);
  const auto remote = f.find("server.remote_workers");
  const auto kserve = f.find("server.kserve_workers");
  const auto workers_file = f.find("server.remote_workers_file");  // elastic: remote_setup.h
  const bool has_remote = (remote != f.end() && !remote->second.empty()) ||
                          (workers_file != f.end() && !workers_file->second.empty());
  const bool has_kserve = kserve != f.end() && !kserve->second.empty();
  if (has_remote && has_kserve) {
    return InvalidArgumentError(
        "server.remote_workers and server.kserve_workers: use one kind of worker");
  }
  // Timing (docs/remote-workers.md "Timing options"); each range-checked with its key.
  ASSIGN_OR_RETURN(double call_ms,
                   ServerNumber(f, "server.remote_call_timeout_ms", 5000, 1, 3600000));
  ASSIGN_OR_RETURN(double backoff_ms,
                   ServerNumber(f, "server.remote_reconnect_backoff_ms", 1000, 10, 600000));
  // Health checks, for both kinds of worker.
  ASSIGN_OR_RETURN(double interval_ms,
                   ServerNumber(f, "server.remote_health_interval_ms", 200, 10, 60000));
  ASSIGN_OR_RETURN(double health_ms,
                   ServerNumber(f, "server.remote_health_timeout_ms", 500, 10, 60000));
  ASSIGN_OR_RETURN(double failures,
                   ServerNumber(f, "server.remote_failures_to_down", 2, 1, 100, true));
  // TLS to either kind of worker (docs/remote-workers.md "TLS"): read once, here.
  std::shared_ptr<::grpc::ChannelCredentials> worker_credentials;
  TlsClientFiles worker_tls;
  if (auto it = f.find("server.worker_tls_ca_file"); it != f.end()) worker_tls.ca_file = it->second;
  if (auto it = f.find("server.worker_tls_cert_file"); it != f.end())
    worker_tls.cert_file = it->second;
  if (auto it = f.find("server.worker_tls_key_file"); it != f.end())
    worker_tls.key_file = it->second;
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
    ASSIGN_OR_RETURN(double slots,
                     ServerNumber(f, "server.remote_worker_slots", 16, 1, 1024, true));
    RETURN_IF_ERROR(ParseRemoteWorkerSet(remote == f.end() ? "" : remote->second,
                                         workers_file == f.end() ? "" : workers_file->second,
                                         static_cast<size_t>(slots), &options));
    options.health_interval = MillisF(interval_ms);
    options.health_timeout = MillisF(health_ms);
    options.failures_to_down = static_cast<int>(failures);
    ASSIGN_OR_RETURN(double connect_s,
                     ServerNumber(f, "server.remote_connect_timeout_s", 30, 0.1, 3600));
    options.connect_timeout = SecondsF(connect_s);
    options.action_timeout = MillisF(call_ms);
    options.reconnect_backoff = MillisF(backoff_ms);
    options.credentials = worker_credentials;
    ro.deployment.workers = static_cast<int>(options.addresses.size());
    ro.worker_addresses = options.addresses;
    ro.make_executor = RemoteExecutorFactory(std::move(options), connected, remote_executor);
  } else if (has_kserve) {
    // Any KServe v2 gRPC server as a worker: one ModelInfer per batch.
    KServeExecutorOptions options;
    ASSIGN_OR_RETURN(options.addresses,
                     ParseRemoteWorkers(kserve->second, "server.kserve_workers"));
    if (auto model = f.find("server.kserve_model"); model != f.end()) options.model = model->second;
    options.call_timeout = MillisF(call_ms);
    options.reconnect_backoff = MillisF(backoff_ms);
    options.health_interval = MillisF(interval_ms);
    options.health_timeout = MillisF(health_ms);
    options.failures_to_down = static_cast<int>(failures);
    options.credentials = worker_credentials;
    ro.deployment.workers = static_cast<int>(options.addresses.size());
    ro.worker_addresses = options.addresses;
    ro.make_executor = KServeExecutorFactory(std::move(options));
  }
  ASSIGN_OR_RETURN(setup.runtime, EngineRuntime::Create(setup.suite.get(), ro));
  RETURN_IF_ERROR(*connected);
  // The engine starts with variants resident on its workers: load them on the processes.
  if (*remote_executor != nullptr) {
    RETURN_IF_ERROR(
        PreloadRemoteWorkers(*remote_executor, *setup.suite, setup.runtime->deployment().workers));
  }
  // One set of request histograms and counters for both frontends: /metrics and the
  // statistics extension count gRPC requests like HTTP ones.
  std::vector<std::string> models;
  std::vector<Duration> slos = {setup.runtime->deployment().slo};
  for (const TaskInfo& t : setup.runtime->Tasks()) {
    models.push_back(t.name);
    slos.push_back(t.default_slo);
  }
  // Latency histogram bounds: dense around the SLOs served, unless the config lists them.
  std::vector<double> buckets = LatencyBucketsForSlos(slos);
  if (auto it = f.find("server.latency_buckets"); it != f.end()) {
    buckets.clear();
    std::stringstream list(it->second);
    for (std::string item; std::getline(list, item, ',');) {
      char* end = nullptr;
      const double b = std::strtod(item.c_str(), &end);
      if (item.empty() || *end != '\0') {
        return InvalidArgumentError("server.latency_buckets: '" + item +
                                    "' is not a number (seconds, comma-separated, ascending)");
      }
      buckets.push_back(b);
    }
    RETURN_IF_ERROR(CheckLatencyBuckets(buckets).WithPrefix("server.latency_buckets"));
  }
  setup.http.request_metrics = std::make_shared<RequestMetrics>(std::move(models), buckets);
  setup.grpc.request_metrics = setup.http.request_metrics;
  setup.http.build_revision = SLOSERVE_GIT_REVISION;
  setup.http.access = access;
  setup.grpc.access = std::move(access);
  setup.http.tls = tls;
  setup.grpc.tls = std::move(tls);

  auto host = f.find("server.host");
  if (host != f.end()) setup.http.host = host->second;
  ASSIGN_OR_RETURN(double port, ServerNumber(f, "server.port", 8000, 0, 65535, true));
  setup.http.port = static_cast<uint16_t>(port);
  ASSIGN_OR_RETURN(double threads,
                   ServerNumber(f, "server.threads", HttpServer::DefaultThreads(), 1, 256, true));
  setup.http.threads = static_cast<int>(threads);
  ASSIGN_OR_RETURN(double body_mb, ServerNumber(f, "server.max_body_mb", 16, 0.001, 4096));
  setup.http.max_body_bytes = static_cast<size_t>(body_mb * 1024 * 1024);
  ASSIGN_OR_RETURN(double max_slo_ms, ServerNumber(f, "server.max_slo_ms", 60000, 1, 86400000));
  setup.http.max_slo = MillisF(max_slo_ms);
  ASSIGN_OR_RETURN(double max_connections,
                   ServerNumber(f, "server.max_connections", 10000, 1, 1e6, true));
  setup.http.max_connections = static_cast<size_t>(max_connections);
  ASSIGN_OR_RETURN(double drain_s, ServerNumber(f, "server.drain_s", 5, 0, 3600));
  setup.drain = SecondsF(drain_s);
  setup.http.drain_timeout = std::max(setup.drain, Seconds(1));
  // gRPC (docs/grpc.md): same host, its own port; shares the runtime with HTTP.
  ASSIGN_OR_RETURN(double grpc_port, ServerNumber(f, "server.grpc_port", 0, 0, 65535, true));
  setup.grpc_enabled = f.count("server.grpc_port") > 0 && grpc_port > 0;
  setup.grpc.host = setup.http.host;
  setup.grpc.port = static_cast<uint16_t>(grpc_port);
  // With remote or KServe workers gRPC polls per queue (remote::PreferOwnQueuePolling),
  // where more than one thread on the inference server's queues would each wake for every
  // event of its connections: one thread by default then.
  ASSIGN_OR_RETURN(double grpc_threads,
                   ServerNumber(f, "server.grpc_threads", polls_own_queue ? 1 : 2, 1, 256, true));
  setup.grpc.threads = static_cast<int>(grpc_threads);
  ASSIGN_OR_RETURN(double grpc_in_flight,
                   ServerNumber(f, "server.grpc_max_in_flight", 10000, 1, 1e7, true));
  setup.grpc.max_in_flight = static_cast<int64_t>(grpc_in_flight);
  setup.grpc.max_message_bytes = setup.http.max_body_bytes;
  setup.grpc.max_slo = setup.http.max_slo;
  setup.grpc.drain_timeout = setup.http.drain_timeout;
  // Slow clients and memory held by request bodies (docs/serve.md, "Connection limits").
  ASSIGN_OR_RETURN(double idle_s, ServerNumber(f, "server.idle_timeout_s", 60, 0.001, 86400));
  setup.http.idle_timeout = SecondsF(idle_s);
  ASSIGN_OR_RETURN(double header_s, ServerNumber(f, "server.header_timeout_s", 10, 0.001, 3600));
  setup.http.header_timeout = SecondsF(header_s);
  ASSIGN_OR_RETURN(double body_s, ServerNumber(f, "server.body_timeout_s", 10, 0.001, 3600));
  setup.http.body_timeout = SecondsF(body_s);
  ASSIGN_OR_RETURN(double rate_kib,
                   ServerNumber(f, "server.min_body_rate_kib", 64, 0.001, 1048576));
  setup.http.min_body_rate = std::max<size_t>(1, static_cast<size_t>(rate_kib * 1024));
  ASSIGN_OR_RETURN(double inflight_mb, ServerNumber(f, "server.inflight_body_mb", 256, 1, 1048576));
  setup.http.max_inflight_body_bytes = static_cast<size_t>(inflight_mb * 1024 * 1024);

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
  std::snprintf(buf, sizeof buf, "suite %s, task %s, %s workers, policy %s, SLO %.0f ms",
                setup.suite->name().c_str(), setup.suite->tasks()[d.task].name.c_str(),
                workers.c_str(), spec.policy.Label().c_str(), ToMillis(d.slo));
  setup.summary = buf;
  return setup;
}

}  // namespace sloserve::cli

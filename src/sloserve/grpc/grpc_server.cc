#include "sloserve/grpc/grpc_server.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <map>
#include <optional>
#include <string_view>

#include "sloserve/core/echo_name.h"
#include "sloserve/grpc/async_unary.h"
#include "sloserve/grpc/model_infer.h"
#include "sloserve/grpc/tls_credentials.h"
#include "sloserve/grpc/tls_reload.h"
#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "sloserve/server/server_extensions.h"
#include "sloserve/server/unknown_model.h"

namespace sloserve {

using grpc_protocol::AsyncServerState;
using grpc_protocol::UnaryCall;
using Service = inference::GRPCInferenceService::AsyncService;

namespace {

void SetDuration(int64_t count, int64_t ns, inference::StatisticDuration* d) {
  d->set_count(static_cast<uint64_t>(count));
  d->set_ns(static_cast<uint64_t>(ns));
}

// One ModelStatistics entry, field by field as RequestMetrics::RenderModelStats renders
// the REST one (no versions; no input/output copies, cache or batch statistics).
void RenderModelStatistics(const std::string& name, const RequestMetrics::ModelStats& m,
                           inference::ModelStatistics* out) {
  out->set_name(name);
  out->set_last_inference(static_cast<uint64_t>(m.last_inference_ms));
  out->set_inference_count(static_cast<uint64_t>(m.inference_count));
  out->set_execution_count(static_cast<uint64_t>(m.success_count));
  inference::InferStatistics* s = out->mutable_inference_stats();
  SetDuration(m.success_count, m.success_ns, s->mutable_success());
  SetDuration(m.fail_count, m.fail_ns, s->mutable_fail());
  SetDuration(m.success_count, m.queue_ns, s->mutable_queue());
  SetDuration(m.success_count, 0, s->mutable_compute_input());
  SetDuration(m.success_count, m.compute_ns, s->mutable_compute_infer());
  SetDuration(m.success_count, 0, s->mutable_compute_output());
  SetDuration(0, 0, s->mutable_cache_hit());
  SetDuration(0, 0, s->mutable_cache_miss());
}

}  // namespace

struct GrpcServer::Impl {
  Options options;
  InferenceBackend* backend = nullptr;
  AccessControl access;
  std::map<std::string, TaskInfo, std::less<>> tasks;
  std::vector<std::string> model_names;  // for did-you-mean in unknown-model errors
  Service service;
  // Before `server`: its certificate copies outlive it (ReloadTls).
  std::unique_ptr<grpc_protocol::ReloadableServerTls> tls;
  std::unique_ptr<::grpc::Server> server;
  std::vector<std::unique_ptr<::grpc::ServerCompletionQueue>> cqs;
  grpc_protocol::AsyncServerThreads threads;
  AsyncServerState state;
  std::atomic<int64_t> infer_in_flight{0};
  bool started = false;

  // One handler per RPC; they live as long as the server (calls point at them).
  UnaryCall<Service, inference::ServerLiveRequest, inference::ServerLiveResponse>::Handler live;
  UnaryCall<Service, inference::ServerReadyRequest, inference::ServerReadyResponse>::Handler ready;
  UnaryCall<Service, inference::ModelReadyRequest, inference::ModelReadyResponse>::Handler
      model_ready;
  UnaryCall<Service, inference::ServerMetadataRequest, inference::ServerMetadataResponse>::Handler
      server_metadata;
  UnaryCall<Service, inference::ModelMetadataRequest, inference::ModelMetadataResponse>::Handler
      model_metadata;
  UnaryCall<Service, inference::ModelInferRequest, inference::ModelInferResponse>::Handler infer;
  UnaryCall<Service, inference::RepositoryIndexRequest, inference::RepositoryIndexResponse>::Handler
      repository_index;
  UnaryCall<Service, inference::RepositoryModelLoadRequest,
            inference::RepositoryModelLoadResponse>::Handler model_load;
  UnaryCall<Service, inference::RepositoryModelUnloadRequest,
            inference::RepositoryModelUnloadResponse>::Handler model_unload;
  UnaryCall<Service, inference::ModelStatisticsRequest, inference::ModelStatisticsResponse>::Handler
      statistics;

  const TaskInfo* FindTask(const std::string& name) const {
    auto it = tasks.find(name);
    return it == tasks.end() ? nullptr : &it->second;
  }

  // NOT_FOUND naming the model, the closest served name and the served ones (as HTTP's 404).
  ::grpc::Status UnknownModel(const std::string& name) const {
    return {::grpc::StatusCode::NOT_FOUND, UnknownModelMessage(name, model_names)};
  }

  // NOT_FOUND for an unknown model or version (the version is checked when given).
  ::grpc::Status CheckModel(const std::string& name, const std::string& version,
                            const TaskInfo** task) const {
    *task = FindTask(name);
    if (*task == nullptr) return UnknownModel(name);
    if (!version.empty()) {
      return grpc_protocol::ToGrpcStatus(grpc_protocol::NoVersionsError(**task, version));
    }
    return ::grpc::Status::OK;
  }

  // OK when a call to `endpoint` may proceed; its "authorization" metadata is looked up
  // only when the endpoint asks for the token.
  ::grpc::Status Authorize(Endpoint endpoint, const ::grpc::ServerContext& ctx) const {
    std::string_view authorization;
    if (access.NeedsToken(endpoint)) {
      const auto& metadata = ctx.client_metadata();
      if (const auto it = metadata.find("authorization"); it != metadata.end()) {
        authorization = std::string_view(it->second.data(), it->second.size());
      }
    }
    const std::optional<AccessDenial> denial = access.Check(endpoint, authorization);
    if (!denial) return ::grpc::Status::OK;
    return {denial->kind == AccessDenial::Kind::kForbidden ? ::grpc::StatusCode::PERMISSION_DENIED
                                                           : ::grpc::StatusCode::UNAUTHENTICATED,
            denial->message};
  }

  // Triton's RepositoryModelLoad/Unload: answered when the backend has done it.
  template <class Call>
  void HandleLoad(Call* call, bool load) {
    if (::grpc::Status s = Authorize(Endpoint::kControl, call->ctx); !s.ok()) {
      call->Reply(s);
      return;
    }
    const std::string& name = call->request.model_name();
    if (FindTask(name) == nullptr) {
      call->Reply(UnknownModel(name));
      return;
    }
    if (!call->request.parameters().empty()) {
      call->Reply({::grpc::StatusCode::INVALID_ARGUMENT,
                   "repository parameters are not supported: sloserve loads the model's "
                   "configured variants (send no parameters)"});
      return;
    }
    backend->SetModelLoaded(
        name, load, [call](Status status) { call->Reply(grpc_protocol::ToGrpcStatus(status)); });
  }

  void InstallHandlers() {
    live = [](auto* call) {
      call->response.set_live(true);
      call->Reply(::grpc::Status::OK);
    };
    ready = [this](auto* call) {
      call->response.set_ready(backend->Ready());
      call->Reply(::grpc::Status::OK);
    };
    model_ready = [this](auto* call) {
      const TaskInfo* task = nullptr;
      ::grpc::Status s = CheckModel(call->request.name(), call->request.version(), &task);
      if (s.ok()) {
        call->response.set_ready(backend->Ready() &&
                                 backend->StateOf(task->name) == ModelState::kLoaded);
      }
      call->Reply(s);
    };
    server_metadata = [this](auto* call) {
      call->response.set_name("sloserve");
      call->response.set_version(options.server_version);
      for (std::string_view e : kServerExtensions) call->response.add_extensions(std::string(e));
      call->Reply(::grpc::Status::OK);
    };
    model_metadata = [this](auto* call) {
      const TaskInfo* task = nullptr;
      ::grpc::Status s = CheckModel(call->request.name(), call->request.version(), &task);
      if (s.ok()) grpc_protocol::RenderModelMetadata(*task, &call->response);
      call->Reply(s);
    };
    infer = [this](auto* call) { HandleInfer(call); };
    repository_index = [this](auto* call) {
      const bool ready = backend->Ready();
      for (const auto& [name, task] : tasks) {
        const ModelState state = ready ? backend->StateOf(name) : ModelState::kUnloaded;
        if (call->request.ready() && state != ModelState::kLoaded) continue;
        auto* m = call->response.add_models();
        m->set_name(name);
        m->set_state(ModelStateName(state));
        if (!ready) {
          m->set_reason(backend->NotReadyReason());
        } else if (state == ModelState::kUnloaded) {
          m->set_reason("unloaded");
        }
      }
      call->Reply(::grpc::Status::OK);
    };
    model_load = [this](auto* call) { HandleLoad(call, true); };
    model_unload = [this](auto* call) { HandleLoad(call, false); };
    statistics = [this](auto* call) { HandleStatistics(call); };
  }

  // Triton's ModelStatistics: the numbers of the REST /v2/models/{m}/stats (one source,
  // RequestMetrics::StatsOf); an empty name = every model.
  void HandleStatistics(UnaryCall<Service, inference::ModelStatisticsRequest,
                                  inference::ModelStatisticsResponse>* call) {
    if (::grpc::Status s = Authorize(Endpoint::kStatistics, call->ctx); !s.ok()) {
      return call->Reply(s);
    }
    const std::string& name = call->request.name();
    if (!name.empty()) {
      const TaskInfo* task = nullptr;
      ::grpc::Status s = CheckModel(name, call->request.version(), &task);
      if (!s.ok()) return call->Reply(s);
    } else if (!call->request.version().empty()) {
      return call->Reply(
          {::grpc::StatusCode::INVALID_ARGUMENT, "ModelStatistics: a version needs a model name"});
    }
    RequestMetrics* metrics = options.request_metrics.get();
    if (metrics == nullptr) {
      return call->Reply({::grpc::StatusCode::UNAVAILABLE, "statistics are not recorded"});
    }
    for (const auto& [task_name, task] : tasks) {
      if (!name.empty() && task_name != name) continue;
      const std::optional<size_t> model = metrics->IndexOf(task_name);
      if (!model) continue;
      RenderModelStatistics(task_name, metrics->StatsOf(*model), call->response.add_model_stats());
    }
    call->Reply(::grpc::Status::OK);
  }

  void HandleInfer(
      UnaryCall<Service, inference::ModelInferRequest, inference::ModelInferResponse>* call) {
    if (::grpc::Status s = Authorize(Endpoint::kInfer, call->ctx); !s.ok()) {
      call->Reply(s);
      return;
    }
    const TaskInfo* task = FindTask(call->request.model_name());
    if (task == nullptr) {
      call->Reply(UnknownModel(call->request.model_name()));
      return;
    }
    const auto received = std::chrono::steady_clock::now();
    RequestMetrics* metrics = options.request_metrics.get();
    const std::optional<size_t> model =
        metrics ? metrics->IndexOf(task->name) : std::optional<size_t>();
    auto parsed = grpc_protocol::ParseModelInfer(*task, call->request, options.max_slo);
    if (!parsed.ok()) {
      if (model) metrics->RecordInvalid(*model);
      call->Reply(grpc_protocol::ToGrpcStatus(parsed.status()));
      return;
    }
    if (infer_in_flight.fetch_add(1) >= options.max_in_flight) {
      infer_in_flight.fetch_sub(1);
      call->Reply({::grpc::StatusCode::RESOURCE_EXHAUSTED,
                   "too many ModelInfer calls in flight (server.grpc_max_in_flight = " +
                       std::to_string(options.max_in_flight) + "); retry later"});
      return;
    }
    auto shared = std::make_shared<grpc_protocol::ModelInferCall>(std::move(parsed).value());
    InferRequest request = std::move(shared->request);
    shared->request.rows = request.rows;
    shared->request.task = request.task;
    shared->request.slo = request.slo;
    backend->Submit(std::move(request), [this, call, shared, task, metrics, model,
                                         received](InferOutcome outcome) {
      if (model) {
        metrics->RecordOutcome(
            *model, outcome,
            std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - received),
            shared->request.rows, shared->request.slo);
      }
      Status s = outcome.status;
      if (s.ok()) s = grpc_protocol::RenderModelInfer(*task, *shared, outcome, &call->response);
      infer_in_flight.fetch_sub(1);
      call->Reply(grpc_protocol::ToGrpcStatus(s));
    });
  }

  template <class Req, class Resp, class Method>
  void Listen(Method method, const typename UnaryCall<Service, Req, Resp>::Handler& handler) {
    for (auto& cq : cqs) {
      UnaryCall<Service, Req, Resp>::Listen(&service, cq.get(), method, &handler, &state);
    }
  }
};

GrpcServer::GrpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GrpcServer::~GrpcServer() {
  Stop();
}

StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Create(Options options,
                                                         InferenceBackend* backend) {
  if (options.threads < 1 || options.threads > 256) {
    return InvalidArgumentError("gRPC threads: must be 1..256, got " +
                                std::to_string(options.threads));
  }
  if (options.max_in_flight < 1) {
    return InvalidArgumentError("gRPC max in-flight calls: must be >= 1, got " +
                                std::to_string(options.max_in_flight));
  }
  RETURN_IF_ERROR(AccessControl::Validate(options.access));
  RETURN_IF_ERROR(ValidateTlsFiles(options.tls));
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->access = AccessControl(impl->options.access);
  impl->backend = backend;
  for (TaskInfo& t : backend->Tasks()) {
    std::string name = t.name;
    impl->tasks.emplace(std::move(name), std::move(t));
  }
  for (const auto& [name, task] : impl->tasks) impl->model_names.push_back(name);
  impl->InstallHandlers();
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(impl)));
}

StatusOr<uint16_t> GrpcServer::Start() {
  Impl& m = *impl_;
  if (m.started) return FailedPreconditionError("gRPC server already started");
  int bound = 0;
  const std::string host =
      m.options.host.find(':') != std::string::npos ? "[" + m.options.host + "]" : m.options.host;
  std::shared_ptr<::grpc::ServerCredentials> credentials;
  if (m.options.tls.enabled()) {
    ASSIGN_OR_RETURN(m.tls, grpc_protocol::ReloadableServerTls::Create(m.options.tls));
    credentials = m.tls->credentials();
  }
  m.server = grpc_protocol::StartAsyncServer(host + ":" + std::to_string(m.options.port),
                                             m.options.max_message_bytes, &m.service,
                                             m.options.threads, &m.cqs, &bound, credentials);
  if (m.server == nullptr) {
    return UnavailableError("gRPC: cannot listen on " + host + ":" +
                            std::to_string(m.options.port));
  }
  m.started = true;
  using namespace inference;
  m.Listen<ServerLiveRequest, ServerLiveResponse>(&Service::RequestServerLive, m.live);
  m.Listen<ServerReadyRequest, ServerReadyResponse>(&Service::RequestServerReady, m.ready);
  m.Listen<ModelReadyRequest, ModelReadyResponse>(&Service::RequestModelReady, m.model_ready);
  m.Listen<ServerMetadataRequest, ServerMetadataResponse>(&Service::RequestServerMetadata,
                                                          m.server_metadata);
  m.Listen<ModelMetadataRequest, ModelMetadataResponse>(&Service::RequestModelMetadata,
                                                        m.model_metadata);
  m.Listen<ModelInferRequest, ModelInferResponse>(&Service::RequestModelInfer, m.infer);
  m.Listen<RepositoryIndexRequest, RepositoryIndexResponse>(&Service::RequestRepositoryIndex,
                                                            m.repository_index);
  m.Listen<RepositoryModelLoadRequest, RepositoryModelLoadResponse>(
      &Service::RequestRepositoryModelLoad, m.model_load);
  m.Listen<RepositoryModelUnloadRequest, RepositoryModelUnloadResponse>(
      &Service::RequestRepositoryModelUnload, m.model_unload);
  m.Listen<ModelStatisticsRequest, ModelStatisticsResponse>(&Service::RequestModelStatistics,
                                                            m.statistics);
  m.threads.Run(m.cqs);
  return static_cast<uint16_t>(bound);
}

void GrpcServer::Stop() {
  Impl& m = *impl_;
  if (!m.started) return;
  m.started = false;
  m.threads.Stop(m.server.get(), &m.state, m.cqs,
                 std::chrono::duration_cast<std::chrono::milliseconds>(m.options.drain_timeout));
  m.server.reset();
  m.cqs.clear();
}

::grpc::CompletionQueue* GrpcServer::queue() const {
  return impl_->cqs.empty() ? nullptr : impl_->cqs.front().get();
}

int64_t GrpcServer::in_flight() const {
  return impl_->infer_in_flight.load();
}

Status GrpcServer::ReloadTls() {
  if (impl_->tls == nullptr) return FailedPreconditionError("the gRPC port does not serve TLS");
  return impl_->tls->Reload();
}

}  // namespace sloserve

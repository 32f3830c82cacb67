#pragma once
// Shared by `serve` and `demo`: a config (a file, or the embedded default) with --set
// overrides becomes a profile suite, an engine runtime and HTTP server options.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "repository_models.h"
#include "sloserve/grpc/grpc_server.h"
#include "sloserve/profile/profile.h"
#include "sloserve/remote/remote_executor.h"
#include "sloserve/runtime/engine_runtime.h"
#include "sloserve/server/http_server.h"

namespace sloserve::cli {

struct ServeSetup {
  std::unique_ptr<ProfileSuite> suite;
  // The models of `models:` run with LibTorch (models[i].repository); empty = none. The
  // runtime's executor points into them: declared before it, destroyed after it.
  std::shared_ptr<RepositoryModels> repository_models;
  std::unique_ptr<EngineRuntime> runtime;
  // With remote workers (server.remote_workers): the runtime's executor; else null.
  RemoteExecutor* remote = nullptr;
  HttpServer::Options http;
  // The gRPC endpoint beside HTTP (server.grpc_port; 0 = off, the default).
  GrpcServer::Options grpc;
  bool grpc_enabled = false;
  // Shutdown: how long the engine serves its queued requests before failing the rest
  // with 503 (server.drain_s); also bounds the HTTP server's final writes.
  Duration drain = Seconds(5);
  std::string summary;  // one line: suite, workers, policy, SLO
};

// "-1,16" -> {-1, 16}; errors name the text.
StatusOr<std::vector<int64_t>> ParseShapeList(const std::string& text);

// `config_path` empty = the embedded default (examples/serve_image.yaml).
// `deferred_init`: the policies initialise on the engine thread after Start() (serve binds
// its port at once and reports progress); otherwise before this returns.
// `make_executor`: the runtime's executor (default: the emulated one); serve
// --model-repository passes the LibTorch executor's factory.
// `oversubscribe` (serve --oversubscribe): the hardware types whose workers run LibTorch
// in this process are not bounded by the machine's cores (else a plan adding a worker
// beyond cores / the type's cores is refused).
StatusOr<ServeSetup> BuildServeSetup(
    const std::string& config_path, const std::vector<std::string>& sets,
    bool deferred_init = false,
    std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>
        make_executor = {},
    bool oversubscribe = false);

}  // namespace sloserve::cli

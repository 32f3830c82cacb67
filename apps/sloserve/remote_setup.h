#pragma once
// serve with remote workers (server.remote_workers, --remote-worker): one engine worker per
// `sloserve worker` address, driven by a RemoteExecutor (docs/remote-workers.md).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sloserve/core/payload_store.h"
#include "sloserve/core/status.h"
#include "sloserve/engine/engine.h"
#include "sloserve/engine/worker_protocol.h"
#include "sloserve/profile/profile.h"
#include "sloserve/remote/kserve_executor.h"
#include "sloserve/remote/remote_executor.h"

namespace sloserve::cli {

// "host:port,host:port" -> the addresses; errors name the bad one and the config `key`.
StatusOr<std::vector<std::string>> ParseRemoteWorkers(
    const std::string& text, const std::string& key = "server.remote_workers");

// server.remote_workers ("host:port,..." or "dns:///NAME:PORT") and
// server.remote_workers_file (either, not both) into `options`. Elastic (the DNS form or
// a file): `slots` engine workers, each labelled with the set's source in
// options->addresses; else one per address.
Status ParseRemoteWorkerSet(const std::string& list, const std::string& file, size_t slots,
                            RemoteExecutorOptions* options);

// The runtime's executor factory: a RemoteExecutor over `options.addresses`, connected
// (every worker answered with the same suite) before it is returned; when connecting
// fails, the error goes to `*connected` (the caller refuses to serve). The executor made
// goes to `*made` (owned by the runtime), for PreloadRemoteWorkers.
std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>
RemoteExecutorFactory(RemoteExecutorOptions options, std::shared_ptr<Status> connected,
                      std::shared_ptr<RemoteExecutor*> made);

// Loads on each remote worker the variants the engine starts with as resident there
// (`workers[w]`'s preload: none, a list, or every variant profiled on its hardware), so
// the worker processes hold what the engine believes loaded from the start.
Status PreloadRemoteWorkers(RemoteExecutor* executor, const ProfileSuite& suite,
                            const std::vector<WorkerSpec>& workers);

// The runtime's executor factory for KServe v2 gRPC servers as workers.
std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>
KServeExecutorFactory(KServeExecutorOptions options);

}  // namespace sloserve::cli

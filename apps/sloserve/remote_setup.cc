#include "remote_setup.h"

#include "sloserve/remote/remote_executor.h"
#include "sloserve/remote/worker_server.h"
#include "sloserve/remote/worker_set.h"

namespace sloserve::cli {

StatusOr<std::vector<std::string>> ParseRemoteWorkers(const std::string& text,
                                                      const std::string& key) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    const std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    RETURN_IF_ERROR(CheckAddress(item, /*allow_any_port=*/false).WithPrefix(key));
    out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

Status ParseRemoteWorkerSet(const std::string& list, const std::string& file, size_t slots,
                            RemoteExecutorOptions* options) {
  if (!list.empty() && !file.empty()) {
    return InvalidArgumentError(
        "server.remote_workers and server.remote_workers_file: give the workers one way");
  }
  if (!file.empty()) {
    options->workers_file = file;
  } else if (remote::IsDnsTarget(list)) {
    RETURN_IF_ERROR(remote::ParseDnsTarget(list).status().WithPrefix("server.remote_workers"));
    options->dns_target = list;
  } else {
    ASSIGN_OR_RETURN(options->addresses, ParseRemoteWorkers(list));
    return OkStatus();
  }
  // The metrics' address label of every slot (its address changes): where they come from.
  options->slots = slots;
  options->addresses.assign(slots, file.empty() ? list : "file:" + file);
  return OkStatus();
}

std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>
RemoteExecutorFactory(RemoteExecutorOptions options, std::shared_ptr<Status> connected,
                      std::shared_ptr<RemoteExecutor*> made) {
  return [options = std::move(options), connected, made](
             const ProfileSuite& suite, PayloadStore* payloads) -> std::unique_ptr<WorkerExecutor> {
    auto executor = std::make_unique<RemoteExecutor>(&suite, payloads, options);
    *connected = executor->Connect();
    *made = executor.get();
    return executor;
  };
}

Status PreloadRemoteWorkers(RemoteExecutor* executor, const ProfileSuite& suite,
                            const std::vector<WorkerSpec>& workers) {
  for (WorkerId w = 0; w < workers.size(); ++w) {
    const WorkerSpec& spec = workers[w];
    if (spec.preload_none) continue;
    std::vector<VariantId> load = spec.preload;
    for (VariantId v = 0; spec.preload.empty() && v < suite.variants().size(); ++v) {
      if (!suite.BatchSizes(spec.hardware, v).empty()) load.push_back(v);
    }
    RETURN_IF_ERROR(executor->Preload(w, spec.hardware, load));
  }
  return OkStatus();
}

std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>
KServeExecutorFactory(KServeExecutorOptions options) {
  return [options = std::move(options)](const ProfileSuite& suite,
                                        PayloadStore* payloads) -> std::unique_ptr<WorkerExecutor> {
    return std::make_unique<KServeExecutor>(&suite, payloads, options);
  };
}

}  // namespace sloserve::cli

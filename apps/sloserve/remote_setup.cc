#include "remote_setup.h"

#include "sloserve/remote/remote_executor.h"
#include "sloserve/remote/worker_server.h"

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

std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>
RemoteExecutorFactory(RemoteExecutorOptions options, std::shared_ptr<Status> connected) {
  return [options = std::move(options), connected](
             const ProfileSuite& suite, PayloadStore* payloads) -> std::unique_ptr<WorkerExecutor> {
    auto executor = std::make_unique<RemoteExecutor>(&suite, payloads, options);
    *connected = executor->Connect();
    return executor;
  };
}

std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>
KServeExecutorFactory(KServeExecutorOptions options) {
  return [options = std::move(options)](const ProfileSuite& suite,
                                        PayloadStore* payloads) -> std::unique_ptr<WorkerExecutor> {
    return std::make_unique<KServeExecutor>(&suite, payloads, options);
  };
}

}  // namespace sloserve::cli

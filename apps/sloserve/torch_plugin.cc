// The executable's side of the LibTorch plugin (torch_plugin_api.h): finds and loads
// libsloserve_torch.so on first use and forwards torch_commands.h to it.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "git_revision.h"
#include "torch_plugin_api.h"

namespace sloserve::cli {
namespace torch_plugin_loader {

// Where the plugin may be: $SLOSERVE_TORCH_PLUGIN, beside the executable (the build
// tree), or ../lib/sloserve/ from it (`cmake --install`).
std::vector<std::string> Candidates() {
  if (const char* env = std::getenv("SLOSERVE_TORCH_PLUGIN"); env != nullptr && *env != '\0') {
    return {env};
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {kTorchPluginFile};  // the dynamic linker's search path
  const std::filesystem::path dir = exe.parent_path();
  return {(dir / kTorchPluginFile).string(),
          (dir.parent_path() / "lib" / "sloserve" / kTorchPluginFile).string()};
}

StatusOr<const TorchPluginApi*> Load() {
  const std::string build = std::string(SLOSERVE_VERSION) + " " + SLOSERVE_GIT_REVISION;
  std::string tried;
  for (const std::string& path : Candidates()) {
    std::error_code ec;
    if (path.find('/') != std::string::npos && !std::filesystem::exists(path, ec)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    // RTLD_NOW: a symbol the executable lacks is an error here, not a crash later.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      return FailedPreconditionError(std::string("cannot load the LibTorch plugin: ") + dlerror());
    }
    auto entry = reinterpret_cast<const TorchPluginApi* (*)()>(dlsym(handle, kTorchPluginEntry));
    if (entry == nullptr) {
      return FailedPreconditionError("the LibTorch plugin " + path + " has no " +
                                     kTorchPluginEntry + " (not a sloserve plugin?)");
    }
    const TorchPluginApi* api = entry();
    if (build != api->build) {
      return FailedPreconditionError("the LibTorch plugin " + path + " is from build '" +
                                     api->build + "', this sloserve is '" + build +
                                     "': rebuild or reinstall both");
    }
    return api;
  }
  return FailedPreconditionError(
      std::string("the LibTorch plugin ") + kTorchPluginFile + " (needed for real models) is " +
      "not installed: looked for " + tried +
      "; build the sloserve_torch_plugin target, `cmake --install`, or set SLOSERVE_TORCH_PLUGIN");
}

// Loaded once per process (dlopen runs LibTorch's initialisers, ~0.7 s).
StatusOr<const TorchPluginApi*> Plugin() {
  static std::once_flag once;
  static StatusOr<const TorchPluginApi*> plugin = InternalError("not loaded");
  std::call_once(once, [] { plugin = Load(); });
  return plugin;
}

}  // namespace torch_plugin_loader

int ProfileMeasureCommand(const std::vector<std::string>& argv) {
  StatusOr<const TorchPluginApi*> api = torch_plugin_loader::Plugin();
  if (!api.ok()) {
    std::fprintf(stderr, "sloserve profile measure: %s\n", api.status().message().c_str());
    return 1;
  }
  return (*api)->profile_measure(argv);
}

StatusOr<TorchServing> PrepareTorchServing(const std::string& repository_dir) {
  ASSIGN_OR_RETURN(const TorchPluginApi* api, torch_plugin_loader::Plugin());
  return api->prepare_serving(repository_dir);
}

Status CheckTorchCores(int total_cores, bool oversubscribe) {
  ASSIGN_OR_RETURN(const TorchPluginApi* api, torch_plugin_loader::Plugin());
  return api->check_cores(total_cores, oversubscribe);
}

Status PreloadTorchWorkers(const TorchServing& torch, const ProfileSuite& suite,
                           const std::vector<WorkerSpec>& workers) {
  ASSIGN_OR_RETURN(const TorchPluginApi* api, torch_plugin_loader::Plugin());
  return api->preload_workers(torch, suite, workers);
}

void RegisterTorchForecasters() {
  // Registered eagerly, loaded lazily: only a planner that asks for `lstm` pays for LibTorch.
  RegisterLoadForecaster(
      "lstm", [](const ForecasterOptions& o) -> StatusOr<std::unique_ptr<LoadForecaster>> {
        ASSIGN_OR_RETURN(const TorchPluginApi* api, torch_plugin_loader::Plugin());
        return api->make_lstm_forecaster(o.model_path);
      });
}

}  // namespace sloserve::cli

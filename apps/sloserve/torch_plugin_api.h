#pragma once
// The boundary between the `sloserve` executable and its LibTorch plugin
// (libsloserve_torch.so, built from torch_commands.cc and src/sloserve/torch/).
//
// Why a plugin: LibTorch's static initialisers cost about 0.7 s (2 s under ASan) in every
// process that links it, and most sloserve runs (sim, plan, serve on emulated workers,
// every e2e test's child process) never execute a TorchScript model. The executable
// loads the plugin with dlopen the first time a real-model path needs it (torch_plugin.cc).
// The plugin leaves sloserve's own symbols undefined and binds them to the executable's
// (which exports them), so there is one copy of every registry and global.
#include <memory>
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/policy/planning/load_forecaster.h"
#include "torch_commands.h"

namespace sloserve::cli {

// Filled in by the plugin; `build` must equal the executable's (same version and git
// revision), so a plugin left over from another build is refused rather than called.
struct TorchPluginApi {
  const char* build;
  int (*profile_measure)(const std::vector<std::string>& argv);
  StatusOr<TorchServing> (*prepare_serving)(const std::string& repository_dir);
  Status (*check_cores)(int total_cores, bool oversubscribe);
  Status (*preload_workers)(const TorchServing& torch, const ProfileSuite& suite,
                            const std::vector<WorkerSpec>& workers);
  StatusOr<std::unique_ptr<LoadForecaster>> (*make_lstm_forecaster)(const std::string& path);
};

}  // namespace sloserve::cli

// The plugin's one exported entry point.
inline constexpr char kTorchPluginEntry[] = "sloserve_torch_plugin_v1";
inline constexpr char kTorchPluginFile[] = "libsloserve_torch.so";
extern "C" const sloserve::cli::TorchPluginApi* sloserve_torch_plugin_v1();

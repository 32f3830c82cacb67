#pragma once
// The CLI's real-model parts (issue 11), built only with LibTorch (SLOSERVE_WITH_TORCH;
// torch_commands_off.cc answers them with an error in builds without it).
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sloserve/core/payload_store.h"
#include "sloserve/core/status.h"
#include "sloserve/engine/engine.h"
#include "sloserve/engine/worker_protocol.h"
#include "sloserve/profile/profile.h"

namespace sloserve::cli {

// `sloserve profile measure --model-repository DIR ...`.
int ProfileMeasureCommand(const std::vector<std::string>& argv);

// What `serve --model-repository DIR` needs: the profile to schedule with and a factory of
// TorchExecutors over the repository (kept alive by the factory).
struct TorchServing {
  std::string profile_path;        // DIR/<task>/profile.prof; several tasks: DIR/profile.prof
  std::string task;                // the first task (the deployment's)
  std::vector<std::string> tasks;  // every task of the repository, each served
  std::string repository_dir;
  // Each variant's model file, for the profile's freshness check (profile_freshness.h).
  std::vector<std::pair<std::string, std::string>> model_files;
  std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)> make_executor;
  // The executor make_executor built (owned by the runtime), for PreloadTorchWorkers.
  std::shared_ptr<WorkerExecutor*> executor = std::make_shared<WorkerExecutor*>(nullptr);
};
// Loads and checks the repository (refused at start naming the path) and finds its profile.
StatusOr<TorchServing> PrepareTorchServing(const std::string& repository_dir);
// The deployment's cores in total, checked against the machine unless `oversubscribe`.
Status CheckTorchCores(int total_cores, bool oversubscribe);
// Loads what the engine starts with as resident on each worker (its preload: the
// deployment's list, or every variant profiled on the worker's hardware) before serving;
// one line per worker with the measured cold starts goes to stderr.
Status PreloadTorchWorkers(const TorchServing& torch, const ProfileSuite& suite,
                           const std::vector<WorkerSpec>& workers);

// Makes the LibTorch forecasters (`forecaster: lstm`) available to the planners; without
// LibTorch nothing is registered and `lstm` is refused with the reason.
void RegisterTorchForecasters();

}  // namespace sloserve::cli

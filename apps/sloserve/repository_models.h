#pragma once
// `serve` with a `models:` list of which some are LibTorch model repositories
// (models[i].repository, docs/torch.md "In a composed deployment"): those models'
// variants run with LibTorch on the workers that execute them, every other model's stay
// emulated (ProfileExecutor), in one pool and one engine. Each repository model is
// executed by a TorchExecutor over the repository's own measured profile, reached
// through a RoutingExecutor that translates the composed suite's ids into its.
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sloserve/config/run_spec.h"
#include "sloserve/core/payload_store.h"
#include "sloserve/engine/engine.h"
#include "sloserve/exec/service_time_model.h"
#include "sloserve/profile/profile.h"
#include "torch_commands.h"

namespace sloserve::cli {

struct RepositoryModel {
  std::string model;   // its name: a task of the composed suite
  std::string origin;  // "models[5]", for errors
  TorchServing torch;  // the repository, loaded (through the LibTorch plugin)
  std::shared_ptr<const ProfileSuite> profile;        // the task's measured profile
  std::unordered_map<VariantId, VariantId> variants;  // composed suite -> profile
  std::unordered_map<HardwareId, HardwareId> hardware;
};

using RepositoryModels = std::vector<RepositoryModel>;

// The models of `models` with a repository, loaded and mapped onto `composed` (the suite
// serve schedules with). Errors name the model: a task the repository does not hold, a
// sloserve without LibTorch or its plugin, two models of one repository task.
StatusOr<std::shared_ptr<RepositoryModels>> PrepareRepositoryModels(
    const std::vector<ModelSpec>& models, const ProfileSuite& composed);

// The runtime's executor: LibTorch for the repository models' variants, the emulated
// executor (`service`, `seed`: as the runtime's default one) for the rest.
std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>
RepositoryModelsExecutor(std::shared_ptr<RepositoryModels> models, ServiceTimeOptions service,
                         uint64_t seed);

// Each repository's profile is the one measured on its model files (else an error naming
// the stale variants, or only a warning with `allow_stale_profile`).
Status CheckRepositoryProfiles(const RepositoryModels& models, bool allow_stale_profile,
                               const std::function<void(const std::string&)>& warn);

// Whether a variant of the composed suite is a repository model's (run by LibTorch).
std::function<bool(uint32_t)> RepositoryVariants(std::shared_ptr<RepositoryModels> models);

struct RepositoryModelsStart {
  bool oversubscribe = false;        // --oversubscribe
  bool allow_stale_profile = false;  // --allow-stale-profile
  std::function<void(const std::string&)> warn;
};
// Before serving, once the runtime exists: each repository's profile is the one measured
// on its model files, the cores of the workers that run LibTorch fit the machine, and the
// repository variants the workers start with are loaded for real.
Status StartRepositoryModels(const RepositoryModels& models, const ProfileSuite& composed,
                             const std::vector<WorkerSpec>& workers,
                             const RepositoryModelsStart& options);

}  // namespace sloserve::cli

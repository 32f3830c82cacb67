#include "repository_models.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <utility>

#include "profile_freshness.h"
#include "sloserve/config/suite_resolver.h"
#include "sloserve/exec/profile_executor.h"
#include "sloserve/exec/routing_executor.h"
#include "sloserve/profile/suite_composition.h"

namespace sloserve::cli {
namespace {

std::string Quoted(const std::string& origin, const std::string& key) {
  return "'" + origin + "." + key + "'";
}

bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec);
}

}  // namespace

StatusOr<std::shared_ptr<RepositoryModels>> PrepareRepositoryModels(
    const std::vector<ModelSpec>& models, const ProfileSuite& composed) {
  auto out = std::make_shared<RepositoryModels>();
  std::set<std::pair<std::string, std::string>> seen;  // (repository, task)
  for (const ModelSpec& m : models) {
    if (m.repository.empty()) continue;
    const std::string where = Quoted(m.origin, "repository");
    std::error_code ec;  // not the throwing overload: a bad path is reported below
    std::string canonical = std::filesystem::weakly_canonical(m.repository, ec).string();
    if (ec) canonical = m.repository;
    if (!seen.emplace(canonical, m.task).second) {
      return InvalidArgumentError(where + ": task '" + m.task + "' of " + m.repository +
                                  " is served by another model already (a task is one model)");
    }
    RepositoryModel r;
    r.model = m.name;
    r.origin = m.origin;
    StatusOr<TorchServing> torch = PrepareTorchServing(m.repository);
    if (!torch.ok()) return torch.status().WithPrefix(where);
    r.torch = std::move(*torch);
    if (std::find(r.torch.tasks.begin(), r.torch.tasks.end(), m.task) == r.torch.tasks.end()) {
      std::string list;
      for (const std::string& t : r.torch.tasks) list += (list.empty() ? "" : ", ") + t;
      return NotFoundError(where + ": " + m.repository + " holds no task '" + m.task +
                           "' (its tasks: " + list + ")");
    }
    if (!SameFile(r.torch.profile_path, m.suite)) {
      return FailedPreconditionError(where + ": the repository is served with " +
                                     r.torch.profile_path + ", the config scheduled it with " +
                                     m.suite + "; remove one of them");
    }
    StatusOr<ProfileSuite> profile = ResolveSuite(m.suite);
    if (!profile.ok()) return profile.status().WithPrefix(where);
    r.profile = std::make_shared<const ProfileSuite>(std::move(*profile));
    const std::optional<TaskId> composed_task = composed.FindTask(m.name);
    const std::optional<TaskId> task = r.profile->FindTask(m.task);
    if (!composed_task || !task)
      return InternalError(where + ": model '" + m.name + "' is not in the served suite");
    for (VariantId v = 0; v < r.profile->variants().size(); ++v) {
      const VariantSpec& spec = r.profile->variants()[v];
      if (spec.task != *task) continue;
      if (const std::optional<VariantId> c =
              composed.FindVariant(ComposedVariantName(m.name, spec.name))) {
        r.variants[*c] = v;
      }
    }
    for (HardwareId h = 0; h < composed.hardware().size(); ++h) {
      if (const auto theirs = r.profile->FindHardware(composed.hardware()[h].name))
        r.hardware[h] = *theirs;
    }
    out->push_back(std::move(r));
  }
  return out;
}

std::function<std::unique_ptr<WorkerExecutor>(const ProfileSuite&, PayloadStore*)>
RepositoryModelsExecutor(std::shared_ptr<RepositoryModels> models, ServiceTimeOptions service,
                         uint64_t seed) {
  return [models, service, seed](const ProfileSuite& suite,
                                 PayloadStore* payloads) -> std::unique_ptr<WorkerExecutor> {
    auto routing = std::make_unique<RoutingExecutor>(
        std::make_unique<ProfileExecutor>(ServiceTimeModel(&suite, service, seed)));
    for (const RepositoryModel& r : *models) {
      RoutingExecutor::Route route;
      route.keep_alive = r.profile;
      route.executor = r.torch.make_executor(*r.profile, payloads);
      route.variants = r.variants;
      route.hardware = r.hardware;
      if (!routing->AddRoute(std::move(route)).ok()) return nullptr;  // one task per model
    }
    return routing;
  };
}

Status CheckRepositoryProfiles(const RepositoryModels& models, bool allow_stale_profile,
                               const std::function<void(const std::string&)>& warn) {
  for (const RepositoryModel& r : models) {
    RETURN_IF_ERROR(CheckProfileFreshness({.suite = r.profile.get(),
                                           .profile_path = r.torch.profile_path,
                                           .repository_dir = r.torch.repository_dir,
                                           .model_files = r.torch.model_files,
                                           .warn_only = allow_stale_profile,
                                           .warn = warn})
                        .WithPrefix(Quoted(r.origin, "repository")));
  }
  return OkStatus();
}

std::function<bool(uint32_t)> RepositoryVariants(std::shared_ptr<RepositoryModels> models) {
  return [models](uint32_t v) {
    return std::any_of(models->begin(), models->end(),
                       [v](const RepositoryModel& r) { return r.variants.count(v) > 0; });
  };
}

Status StartRepositoryModels(const RepositoryModels& models, const ProfileSuite& composed,
                             const std::vector<WorkerSpec>& workers,
                             const RepositoryModelsStart& options) {
  RETURN_IF_ERROR(CheckRepositoryProfiles(models, options.allow_stale_profile, options.warn));
  std::set<HardwareId> torch_types;
  for (const RepositoryModel& r : models) {
    for (const auto& [ours, theirs] : r.hardware) torch_types.insert(ours);
  }
  // The workers that may run LibTorch now; a planner's later workers are bounded by its
  // own limits (composed: max_workers).
  int cores = 0;
  for (const WorkerSpec& w : workers) {
    if (torch_types.count(w.hardware)) cores += composed.hardware()[w.hardware].cores;
  }
  RETURN_IF_ERROR(CheckTorchCores(cores, options.oversubscribe));
  // What each worker starts with, in the repository profile's ids; the rest of the pool
  // (and the other models' variants) stays emulated.
  for (const RepositoryModel& r : models) {
    std::vector<WorkerSpec> theirs = workers;
    bool any = false;
    for (size_t w = 0; w < workers.size(); ++w) {
      WorkerSpec& spec = theirs[w];
      spec.preload.clear();
      const auto hw = r.hardware.find(workers[w].hardware);
      if (workers[w].preload_none || hw == r.hardware.end()) {
        spec.preload_none = true;
        continue;
      }
      std::vector<VariantId> resident = workers[w].preload;
      if (resident.empty()) {
        for (VariantId v = 0; v < composed.variants().size(); ++v) {
          if (!composed.BatchSizes(workers[w].hardware, v).empty()) resident.push_back(v);
        }
      }
      for (VariantId v : resident) {
        if (const auto it = r.variants.find(v); it != r.variants.end())
          spec.preload.push_back(it->second);
      }
      spec.hardware = hw->second;
      spec.preload_none = spec.preload.empty();
      any = any || !spec.preload_none;
    }
    if (any) {
      RETURN_IF_ERROR(
          PreloadTorchWorkers(r.torch, *r.profile, theirs).WithPrefix("model '" + r.model + "'"));
    }
  }
  return OkStatus();
}

}  // namespace sloserve::cli

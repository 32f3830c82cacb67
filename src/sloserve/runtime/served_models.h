#pragma once
// The models a runtime serves (issue 31: many models on one pool). Every task of the suite
// with a variant profiled on a worker's hardware is a KServe model; each gets its own
// served SLO (a multi-model deployment's per-model SLO, else the deployment's for its own
// task, else the task's default), its own fastest achievable latency (a request's slo_ms
// below it is refused: docs/protocol.md) and its own row limit (max_batch_size at its SLO).
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/policy/selection/row_capacity.h"
#include "sloserve/profile/profile.h"
#include "sloserve/server/inference_backend.h"

namespace sloserve {

// The fastest variant of a task alone at batch 1 on any of the given hardware types, at
// `quantile` of its latency (the config's SLO check: the median). nullopt when no variant
// of the task is profiled there.
struct FastestVariant {
  Duration latency{};
  std::string variant;
  std::string hardware;
};
std::optional<FastestVariant> FastestOfTask(const ProfileSuite& suite, TaskId task,
                                            std::span<const HardwareId> hardware, double quantile);

struct ServedModelsSpec {
  TaskId deployment_task = 0;
  Duration deployment_slo{};
  // Per-model SLOs by model (task) name; a model not listed keeps the deployment's SLO
  // (its own task) or the task's default.
  std::vector<std::pair<std::string, Duration>> model_slos;
  std::vector<int64_t> input_shape;  // replaces the deployment's task's declared input shape
  double slo_check_quantile = 0.5;
  int32_t priority_levels = 1;
};

class ServedModels {
 public:
  // InvalidArgument/NotFound naming the model: a per-model SLO for a model that is not
  // served, or one below the model's fastest achievable latency (the config's check).
  static StatusOr<ServedModels> Build(const ProfileSuite& suite,
                                      std::span<const HardwareId> hardware, const RowCapacity& rows,
                                      const ServedModelsSpec& spec);

  const std::vector<TaskInfo>& infos() const { return infos_; }
  // The SLO a request of `task` gets when it names none (every task of the suite).
  Duration SloOf(TaskId task) const { return slo_[task]; }
  // The per-model SLOs as the engine takes them (EngineOptions::model_slo): by TaskId,
  // zero where the engine's own default applies.
  const std::vector<Duration>& engine_model_slo() const { return engine_slo_; }
  // The served model of this name; nullopt for names the runtime does not serve.
  std::optional<TaskId> Find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::vector<TaskInfo> infos_;
  std::vector<Duration> slo_;                    // by TaskId
  std::vector<Duration> engine_slo_;             // by TaskId, 0 = the engine's default
  std::unordered_map<std::string, TaskId> ids_;  // served models only
};

}  // namespace sloserve

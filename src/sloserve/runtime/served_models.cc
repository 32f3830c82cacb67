#include "sloserve/runtime/served_models.h"

#include <cstdio>

#include "sloserve/core/did_you_mean.h"

namespace sloserve {

std::optional<FastestVariant> FastestOfTask(const ProfileSuite& suite, TaskId task,
                                            std::span<const HardwareId> hardware, double quantile) {
  std::optional<FastestVariant> best;
  for (HardwareId hw : hardware) {
    for (VariantId v : suite.VariantsOfTask(task)) {
      const LatencyDistribution* l = suite.Latency(hw, v, 1);
      if (l == nullptr) continue;
      const Duration q = l->Quantile(quantile);
      if (!best || q < best->latency)
        best = FastestVariant{q, suite.variants()[v].name, suite.hardware()[hw].name};
    }
  }
  return best;
}

StatusOr<ServedModels> ServedModels::Build(const ProfileSuite& suite,
                                           std::span<const HardwareId> hardware,
                                           const RowCapacity& rows, const ServedModelsSpec& spec) {
  ServedModels m;
  const size_t tasks = suite.tasks().size();
  m.slo_.resize(tasks);
  m.engine_slo_.assign(tasks, Duration::zero());
  for (TaskId t = 0; t < tasks; ++t) {
    m.slo_[t] = t == spec.deployment_task ? spec.deployment_slo : suite.tasks()[t].default_slo;
  }
  std::vector<std::optional<FastestVariant>> fastest(tasks);
  for (TaskId t = 0; t < tasks; ++t)
    fastest[t] = FastestOfTask(suite, t, hardware, spec.slo_check_quantile);
  for (const auto& [name, slo] : spec.model_slos) {
    const std::optional<TaskId> t = suite.FindTask(name);
    if (!t || !fastest[*t]) {
      std::vector<std::string> served;
      for (TaskId u = 0; u < tasks; ++u)
        if (fastest[u]) served.push_back(suite.tasks()[u].name);
      return NotFoundError("models: '" + name + "' is not a model of suite '" + suite.name() +
                           "' served on this deployment's hardware (" + DidYouMean(name, served) +
                           "served: " + JoinNames(served) + ")");
    }
    if (slo <= Duration::zero() || slo > Seconds(3600)) {
      return InvalidArgumentError("models: the SLO of '" + name + "' must be in (0, 3600] s");
    }
    if (slo < fastest[*t]->latency) {
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "models: impossible SLO %.3f ms for '%s': the fastest variant (%s) takes "
                    "%.3f ms at batch 1 on %s",
                    ToMillis(slo), name.c_str(), fastest[*t]->variant.c_str(),
                    ToMillis(fastest[*t]->latency), fastest[*t]->hardware.c_str());
      return InvalidArgumentError(buf);
    }
    m.slo_[*t] = slo;
    m.engine_slo_[*t] = slo;
  }
  // Every task with a variant profiled on some worker's hardware is served (a
  // heterogeneous deployment has several types; the engine routes each variant).
  for (TaskId t = 0; t < tasks; ++t) {
    if (!fastest[t]) continue;
    const TaskSpec& task = suite.tasks()[t];
    TaskInfo info;
    info.name = task.name;
    for (VariantId v : suite.VariantsOfTask(t)) {
      for (HardwareId h : hardware) {
        if (!suite.BatchSizes(h, v).empty()) {
          info.variants.push_back(suite.variants()[v].name);
          break;
        }
      }
    }
    info.input_name = task.input_name;
    info.input_datatype = task.input_datatype;
    info.input_shape = task.input_shape;
    info.output_name = task.output_name;
    info.output_datatype = task.output_datatype;
    info.output_shape = task.output_shape;
    if (t == spec.deployment_task && !spec.input_shape.empty()) info.input_shape = spec.input_shape;
    info.default_slo = m.slo_[t];
    info.max_batch_size = rows.MaxRows(hardware, t, info.default_slo);
    info.priority_levels = spec.priority_levels;
    info.fastest_latency = fastest[t]->latency;
    info.fastest_variant = fastest[t]->variant + " on " + fastest[t]->hardware;
    m.ids_.emplace(info.name, t);
    m.infos_.push_back(std::move(info));
  }
  return m;
}

std::optional<TaskId> ServedModels::Find(const std::string& name) const {
  const auto it = ids_.find(name);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> ServedModels::names() const {
  std::vector<std::string> out;
  out.reserve(infos_.size());
  for (const TaskInfo& t : infos_) out.push_back(t.name);
  return out;
}

}  // namespace sloserve

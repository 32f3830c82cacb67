#include "sloserve/profile/suite_composition.h"

#include <algorithm>
#include <set>

#include "sloserve/core/did_you_mean.h"

namespace sloserve {

std::string ComposedVariantName(const std::string& model, const std::string& variant) {
  return model + "/" + variant;
}

namespace {

std::vector<std::string> TaskNames(const ProfileSuite& suite) {
  std::vector<std::string> out;
  for (const TaskSpec& t : suite.tasks()) out.push_back(t.name);
  return out;
}

// The base variants model `m` deploys, in the suite's order of the task's variants.
StatusOr<std::vector<VariantId>> ModelVariants(const ProfileSuite& base, TaskId task,
                                               const ComposedModel& m) {
  const std::vector<VariantId> of_task = base.VariantsOfTask(task);
  if (m.variants.empty()) return of_task;
  std::vector<std::string> names;
  for (VariantId v : of_task) names.push_back(base.variants()[v].name);
  std::vector<VariantId> out;
  for (const std::string& name : m.variants) {
    const std::optional<VariantId> v = base.FindVariant(name);
    if (!v || base.variants()[*v].task != task) {
      return NotFoundError(m.origin + ".variants: '" + name + "' is not a variant of task '" +
                           base.tasks()[task].name + "' of suite " + base.name() + " (" +
                           DidYouMean(name, names) + "variants: " + JoinNames(names) + ")");
    }
    if (std::find(out.begin(), out.end(), *v) != out.end())
      return InvalidArgumentError(m.origin + ".variants: '" + name + "' is listed twice");
    out.push_back(*v);
  }
  return out;
}

}  // namespace

StatusOr<ProfileSuite> ComposeSuite(const ProfileSuite& base,
                                    const std::vector<ComposedModel>& models) {
  if (base.tasks().empty())
    return FailedPreconditionError("suite '" + base.name() + "' has no tasks");
  if (models.empty()) return InvalidArgumentError("models: the list is empty");
  ProfileSuite out;
  out.set_name(base.name());
  out.set_provenance(base.provenance() + "; composed: " + std::to_string(models.size()) +
                     " models (docs/multi-model.md)");
  for (const HardwareSpec& h : base.hardware()) out.AddHardware(h);
  // derived[v]: the composed variants made from base variant v.
  std::vector<std::vector<VariantId>> derived(base.variants().size());
  std::set<std::string> names;
  for (const ComposedModel& m : models) {
    if (m.name.empty()) return InvalidArgumentError(m.origin + ".name: a model needs a name");
    if (m.name.find('/') != std::string::npos)
      return InvalidArgumentError(m.origin + ".name: '" + m.name +
                                  "' has a '/' (variants are named MODEL/VARIANT)");
    if (!names.insert(m.name).second)
      return InvalidArgumentError(m.origin + ".name: '" + m.name + "' names two models");
    TaskId task = 0;
    if (!m.task.empty()) {
      const std::optional<TaskId> t = base.FindTask(m.task);
      if (!t) {
        const std::vector<std::string> tasks = TaskNames(base);
        return NotFoundError(m.origin + ".task: '" + m.task + "' is not a task of suite " +
                             base.name() + " (" + DidYouMean(m.task, tasks) +
                             "tasks: " + JoinNames(tasks) + ")");
      }
      task = *t;
    }
    ASSIGN_OR_RETURN(std::vector<VariantId> variants, ModelVariants(base, task, m));
    if (variants.empty())
      return FailedPreconditionError(m.origin + ".task: task '" + base.tasks()[task].name +
                                     "' has no variants");
    TaskSpec spec = base.tasks()[task];
    spec.name = m.name;
    if (m.slo.count() > 0) spec.default_slo = m.slo;
    const TaskId id = out.AddTask(std::move(spec));
    for (VariantId v : variants) {
      VariantSpec vs = base.variants()[v];
      vs.name = ComposedVariantName(m.name, vs.name);
      vs.task = id;
      derived[v].push_back(out.AddVariant(std::move(vs)));
    }
  }
  base.ForEachDistribution([&](ProfileSuite::SampleTable table, HardwareId hw, VariantId v,
                               int rows, const LatencyDistribution& d) {
    for (VariantId c : derived[v]) out.RestoreDistribution(table, hw, c, rows, d);
  });
  for (const ExecHistogram& h : base.exec_histograms()) {
    for (VariantId c : derived[h.variant]) {
      ExecHistogram copy = h;
      copy.variant = c;
      out.AddExecHistogram(std::move(copy));
    }
  }
  for (const CapacityPoint& p : base.capacity_points()) {
    for (VariantId c : derived[p.variant]) {
      CapacityPoint copy = p;
      copy.variant = c;
      out.AddCapacityPoint(copy);
    }
  }
  for (const auto& [v, hash] : base.model_hashes()) {
    for (VariantId c : derived[v]) out.SetModelHash(c, hash);
  }
  return out;
}

}  // namespace sloserve

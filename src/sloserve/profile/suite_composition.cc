#include "sloserve/profile/suite_composition.h"

#include <algorithm>
#include <set>
#include <sstream>

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

std::string NumberText(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
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

// The hardware types of the composed suite: each base's added by name, a type already
// there (from an earlier base) checked field by field. `map` receives, per type of
// `base`, its id in `out`; `from[id]` names the suite a type of `out` came from.
Status UniteHardware(const ProfileSuite& base, const std::string& origin, ProfileSuite* out,
                     std::vector<std::string>* from, std::vector<HardwareId>* map) {
  for (const HardwareSpec& h : base.hardware()) {
    const std::optional<HardwareId> known = out->FindHardware(h.name);
    if (!known) {
      map->push_back(out->AddHardware(h));
      from->push_back(base.name());
      continue;
    }
    const HardwareSpec& k = out->hardware()[*known];
    auto differs = [&](const char* field, double mine, double theirs, const char* hint) {
      return FailedPreconditionError(origin + ".suite: hardware type '" + h.name + "' has " +
                                     field + " " + NumberText(mine) + " in suite " + base.name() +
                                     " but " + NumberText(theirs) + " in suite " + (*from)[*known] +
                                     " (a type shared by two suites must agree on " +
                                     "price_per_hour, cores and memory_gb" + hint + ")");
    };
    if (h.price_per_hour != k.price_per_hour)
      return differs("price_per_hour", h.price_per_hour, k.price_per_hour,
                     "; hardware_prices: states one price for both");
    if (h.cores != k.cores) return differs("cores", h.cores, k.cores, "");
    if (h.memory_gb != k.memory_gb) return differs("memory_gb", h.memory_gb, k.memory_gb, "");
    map->push_back(*known);
  }
  return OkStatus();
}

// The composed suite's name and provenance: the base's with one base, else all of them.
void NameComposedSuite(const std::vector<const ProfileSuite*>& used, size_t models,
                       ProfileSuite* out) {
  const std::string composed =
      "composed: " + std::to_string(models) + " models (docs/multi-model.md)";
  if (used.size() == 1) {
    out->set_name(used[0]->name());
    out->set_provenance(used[0]->provenance() + "; " + composed);
    return;
  }
  std::string name;
  std::string provenance = composed + " from " + std::to_string(used.size()) + " suites";
  for (const ProfileSuite* s : used) {
    name += (name.empty() ? "" : "+") + s->name();
    provenance += "; " + s->name() + ": " + s->provenance();
  }
  out->set_name(name);
  out->set_provenance(provenance);
}

}  // namespace

StatusOr<ProfileSuite> ComposeSuite(const std::vector<const ProfileSuite*>& bases,
                                    const std::vector<ComposedModel>& models) {
  if (models.empty()) return InvalidArgumentError("models: the list is empty");
  // The bases some model comes from, each named in errors by the first such model.
  std::vector<const ComposedModel*> first_model(bases.size(), nullptr);
  for (const ComposedModel& m : models) {
    if (m.suite >= bases.size() || bases[m.suite] == nullptr)
      return InternalError(m.origin + ".suite: no base suite " + std::to_string(m.suite));
    if (first_model[m.suite] == nullptr) first_model[m.suite] = &m;
  }
  std::vector<const ProfileSuite*> used;
  for (size_t b = 0; b < bases.size(); ++b) {
    if (first_model[b] == nullptr) continue;
    if (bases[b]->tasks().empty())
      return FailedPreconditionError("suite '" + bases[b]->name() + "' has no tasks");
    used.push_back(bases[b]);
  }
  ProfileSuite out;
  NameComposedSuite(used, models.size(), &out);
  std::vector<std::vector<HardwareId>> hardware(bases.size());
  std::vector<std::string> hardware_from;
  for (size_t b = 0; b < bases.size(); ++b) {
    if (first_model[b] == nullptr) continue;
    RETURN_IF_ERROR(
        UniteHardware(*bases[b], first_model[b]->origin, &out, &hardware_from, &hardware[b]));
  }
  // derived[b][v]: the composed variants made from variant v of base b.
  std::vector<std::vector<std::vector<VariantId>>> derived(bases.size());
  for (size_t b = 0; b < bases.size(); ++b) derived[b].resize(bases[b]->variants().size());
  std::set<std::string> names;
  for (const ComposedModel& m : models) {
    const ProfileSuite& base = *bases[m.suite];
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
      derived[m.suite][v].push_back(out.AddVariant(std::move(vs)));
    }
  }
  // Every per-variant record of a base, on the composed ids of its hardware and variants.
  for (size_t b = 0; b < bases.size(); ++b) {
    if (first_model[b] == nullptr) continue;
    const ProfileSuite& base = *bases[b];
    const std::vector<HardwareId>& hw_id = hardware[b];
    const std::vector<std::vector<VariantId>>& from = derived[b];
    base.ForEachDistribution([&](ProfileSuite::SampleTable table, HardwareId hw, VariantId v,
                                 int rows, const LatencyDistribution& d) {
      for (VariantId c : from[v]) out.RestoreDistribution(table, hw_id[hw], c, rows, d);
    });
    for (const ExecHistogram& h : base.exec_histograms()) {
      for (VariantId c : from[h.variant]) {
        ExecHistogram copy = h;
        copy.variant = c;
        out.AddExecHistogram(std::move(copy));
      }
    }
    for (const CapacityPoint& p : base.capacity_points()) {
      for (VariantId c : from[p.variant]) {
        CapacityPoint copy = p;
        copy.hardware = hw_id[p.hardware];
        copy.variant = c;
        out.AddCapacityPoint(copy);
      }
    }
    for (const auto& [v, hash] : base.model_hashes()) {
      for (VariantId c : from[v]) out.SetModelHash(c, hash);
    }
  }
  return out;
}

StatusOr<ProfileSuite> ComposeSuite(const ProfileSuite& base,
                                    const std::vector<ComposedModel>& models) {
  return ComposeSuite(std::vector<const ProfileSuite*>{&base}, models);
}

}  // namespace sloserve

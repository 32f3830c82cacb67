#include "sloserve/config/engine_options.h"

namespace sloserve {

EngineOptions EngineOptionsFor(const RunSpec& spec, Face face) {
  EngineOptions o;
  o.max_worker_queue = spec.max_worker_queue;
  // Overload protection is on when serving unless the config says engine.admission: off;
  // a simulation reproduces a paper's system, which had none, unless it says on.
  o.admission.enabled = spec.admission.value_or(face == Face::kServe);
  o.admission.max_queued_rows = spec.admission_queue;
  o.admission.priority_levels = spec.priority_levels;
  o.admission.default_priority = spec.priority_default;
  o.series_interval = spec.series_interval;
  o.names = PolicyNamesOf(spec.policy);
  return o;
}

Status AddModelOverrides(const RunSpec& spec, const ProfileSuite& suite, PolicySet* policies,
                         EngineOptions* options) {
  if (spec.models.empty()) return OkStatus();
  if (suite.tasks().size() != spec.models.size())
    return InternalError("the suite was not composed from the run's models (ResolveRunSuite)");
  options->model_slo.assign(spec.models.size(), Duration(0));
  for (size_t i = 0; i < spec.models.size(); ++i) {
    options->model_slo[i] = suite.tasks()[i].default_slo;
    if (!spec.models[i].policy) continue;
    StatusOr<PolicySet> set = MakePolicySet(*spec.models[i].policy);
    if (!set.ok()) return set.status().WithPrefix("'" + spec.models[i].origin + ".policy'");
    policies->model_batching.resize(spec.models.size());
    policies->model_batching[i] = std::move(set->batching);
  }
  return OkStatus();
}

}  // namespace sloserve

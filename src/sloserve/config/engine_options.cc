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

}  // namespace sloserve

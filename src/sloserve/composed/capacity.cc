#include "sloserve/composed/capacity.h"

#include <algorithm>
#include <string>

namespace sloserve {

double ComposedWorkerCapacity(const ProfileSuite& suite, HardwareId hw, VariantId v, Duration slo,
                              const ComposedCapacityOptions& o) {
  const double limit_s = o.slo_fraction * ToSeconds(slo);
  double best = 0;
  for (int b : suite.BatchSizes(hw, v)) {
    const LatencyDistribution* d = suite.ServiceLatency(hw, v, b);
    if (d == nullptr || d->empty()) continue;
    const double l = ToSeconds(d->Quantile(o.quantile));
    if (l <= limit_s && l > 0) best = std::max(best, b / l);
  }
  return best;
}

StatusOr<std::vector<ComposedCandidate>> BuildComposedCandidates(
    const ProfileSuite& suite, const std::vector<Duration>& slo_by_model,
    const ComposedCapacityOptions& o) {
  if (!(o.slo_fraction > 0 && o.slo_fraction <= 1)) {
    return InvalidArgumentError("slo_fraction must be in (0, 1]");
  }
  if (!(o.quantile > 0 && o.quantile <= 1))
    return InvalidArgumentError("quantile must be in (0, 1]");
  if (slo_by_model.size() != suite.tasks().size()) {
    return InvalidArgumentError("one SLO per model (task) of suite " + suite.name() + " is needed");
  }
  for (size_t t = 0; t < slo_by_model.size(); ++t) {
    if (slo_by_model[t] <= Duration::zero()) {
      return InvalidArgumentError("the SLO of model " + suite.tasks()[t].name + " must be > 0");
    }
  }
  std::vector<ComposedCandidate> out;
  for (VariantId v = 0; v < suite.variants().size(); ++v) {
    const VariantSpec& spec = suite.variants()[v];
    for (HardwareId h = 0; h < suite.hardware().size(); ++h) {
      // A worker has a machine of its type's size: a variant larger than it cannot load.
      const double machine_mb = suite.hardware()[h].memory_gb * 1024.0;
      if (machine_mb > 0 && spec.memory_mb > machine_mb) continue;
      const double cap = ComposedWorkerCapacity(suite, h, v, slo_by_model[spec.task], o);
      if (cap <= 0) continue;
      ComposedCandidate c;
      c.model = spec.task;
      c.variant = v;
      c.hardware = h;
      c.name = spec.name + "@" + suite.hardware()[h].name;
      c.accuracy = spec.accuracy;
      c.capacity_rps = cap;
      c.price_per_hour = suite.hardware()[h].price_per_hour;
      c.memory_mb = spec.memory_mb;
      c.load_time_s = ToSeconds(spec.load_time);
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace sloserve

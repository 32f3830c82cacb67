#include "sloserve/composed/capacity.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "sloserve/infadapter/capacity.h"

namespace sloserve {

namespace {

// InfAdapter's capacity of (hw, v) at `slo` from the suite's capacity records (section 3
// of its paper; infadapter/capacity.h): the line fitted on the records at its fit core
// counts, at hw's cores, where hw's own record (or its latency sample, the measured p99)
// is within the SLO. nullopt when v has no records at `slo` (the latency-based capacity
// applies); 0 when infeasible.
std::optional<double> RecordedCapacity(const ProfileSuite& suite, HardwareId hw, VariantId v,
                                       Duration slo) {
  const InfAdapterCapacityOptions defaults;
  const std::set<int> fit_cores(defaults.fit_cores.begin(), defaults.fit_cores.end());
  std::vector<double> xs, ys;
  const CapacityPoint* own = nullptr;
  bool any = false;
  for (const CapacityPoint& p : suite.capacity_points()) {
    if (p.variant != v || p.slo != slo) continue;
    any = true;
    if (p.hardware == hw) own = &p;
    const int cores = suite.hardware()[p.hardware].cores;
    if (fit_cores.count(cores)) {
      xs.push_back(cores);
      ys.push_back(p.capacity_rps);
    }
  }
  if (!any) return std::nullopt;
  StatusOr<LineFit> fit = FitLine(xs, ys);
  if (!fit.ok()) return 0.0;  // fewer than two fit points: no line to read
  std::optional<Duration> p99;
  if (own != nullptr && own->p99) p99 = *own->p99;
  if (!p99) {
    const std::vector<int>& sizes = suite.BatchSizes(hw, v);
    if (!sizes.empty()) p99 = suite.Latency(hw, v, sizes.front())->Quantile(0.99);
  }
  if (!p99 || *p99 > slo) return 0.0;
  return std::max(0.0, fit->intercept + fit->slope * suite.hardware()[hw].cores);
}

}  // namespace

double ComposedWorkerCapacity(const ProfileSuite& suite, HardwareId hw, VariantId v, Duration slo,
                              const ComposedCapacityOptions& o) {
  if (const std::optional<double> recorded = RecordedCapacity(suite, hw, v, slo)) return *recorded;
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

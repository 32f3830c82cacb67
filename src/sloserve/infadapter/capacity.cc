#include "sloserve/infadapter/capacity.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace sloserve {

StatusOr<LineFit> FitLine(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return InvalidArgumentError("FitLine: x and y differ in length");
  const size_t n = x.size();
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) {
      return InvalidArgumentError("FitLine: non-finite point");
    }
  }
  if (std::set<double>(x.begin(), x.end()).size() < 2) {
    return InvalidArgumentError("FitLine: needs at least two distinct x");
  }
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= n, my /= n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
  LineFit f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.points = static_cast<int>(n);
  double sse = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = f.intercept + f.slope * x[i] - y[i];
    sse += r * r;
    if (y[i] != 0) f.max_relative_error = std::max(f.max_relative_error, std::abs(r / y[i]));
  }
  f.rmse = std::sqrt(sse / n);
  return f;
}

double InfAdapterVariantCapacity::Throughput(int cores) const {
  if (cores <= 0) return 0;
  return headroom * std::max(0.0, fit.intercept + fit.slope * cores);
}

std::optional<Duration> InfAdapterVariantCapacity::P99(int cores) const {
  if (cores < 1 || cores > static_cast<int>(p99_by_cores.size())) return std::nullopt;
  return p99_by_cores[cores - 1];
}

bool InfAdapterVariantCapacity::Feasible(int cores, Duration slo) const {
  const std::optional<Duration> p = P99(cores);
  return p.has_value() && *p <= slo && Throughput(cores) > 0;
}

namespace {

// "1, 2, 4" for a note or an error.
std::string CoreList(const std::vector<int>& cores) {
  std::string s;
  for (int c : cores) s += (s.empty() ? "" : ", ") + std::to_string(c);
  return s;
}

// Fills each core count without a p99 that lies between two with one, linearly in the
// core count, and notes which it filled.
void InterpolateMissingP99(InfAdapterVariantCapacity& vc, std::vector<std::string>& notes) {
  std::vector<std::optional<Duration>>& p = vc.p99_by_cores;
  std::vector<int> filled;
  int below = -1;  // index of the last profiled core count
  for (int i = 0; i < static_cast<int>(p.size()); ++i) {
    if (!p[i]) continue;
    for (int j = below + 1; below >= 0 && j < i; ++j) {
      const double f = static_cast<double>(j - below) / (i - below);
      p[j] = *p[below] + std::chrono::duration_cast<Duration>((*p[i] - *p[below]) * f);
      filled.push_back(j + 1);
    }
    below = i;
  }
  if (!filled.empty()) {
    notes.push_back(vc.name + ": no p99 at " + CoreList(filled) +
                    " cores; interpolated between the nearest profiled core counts");
  }
}

}  // namespace

Status ValidateInfAdapterCapacityOptions(const InfAdapterCapacityOptions& o) {
  if (!(o.headroom > 0 && o.headroom <= 1)) {
    return InvalidArgumentError("headroom must be in (0, 1], got " + std::to_string(o.headroom));
  }
  if (o.slo <= Duration::zero()) return InvalidArgumentError("slo must be positive");
  std::set<int> distinct;
  for (int c : o.fit_cores) {
    if (c < 1) return InvalidArgumentError("fit_cores must be >= 1, got " + std::to_string(c));
    distinct.insert(c);
  }
  if (distinct.size() < 2) {
    return InvalidArgumentError("fit_cores needs at least two distinct core counts");
  }
  return OkStatus();
}

StatusOr<InfAdapterCapacityModel> BuildInfAdapterCapacity(const ProfileSuite& suite,
                                                          const InfAdapterCapacityOptions& o) {
  RETURN_IF_ERROR(ValidateInfAdapterCapacityOptions(o));
  if (suite.capacity_points().empty()) {
    return FailedPreconditionError("suite " + suite.name() + " has no capacity records");
  }
  if (suite.tasks().empty())
    return FailedPreconditionError("suite " + suite.name() + " has no task");
  TaskId task = 0;
  if (!o.task.empty()) {
    const std::optional<TaskId> t = suite.FindTask(o.task);
    if (!t) return InvalidArgumentError("task: no task " + o.task + " in suite " + suite.name());
    task = *t;
  }
  // Core count -> hardware (the first type with that many cores).
  std::map<int, HardwareId> hw_of_cores;
  for (HardwareId h = 0; h < suite.hardware().size(); ++h) {
    hw_of_cores.emplace(suite.hardware()[h].cores, h);
  }
  // (hardware, variant) -> capacity record at the SLO.
  std::map<std::pair<HardwareId, VariantId>, const CapacityPoint*> at_slo;
  for (const CapacityPoint& p : suite.capacity_points()) {
    if (p.slo == o.slo) at_slo[{p.hardware, p.variant}] = &p;
  }
  InfAdapterCapacityModel model;
  model.slo = o.slo;
  model.headroom = o.headroom;
  model.max_profiled_cores = hw_of_cores.empty() ? 0 : hw_of_cores.rbegin()->first;
  const std::set<int> fit_cores(o.fit_cores.begin(), o.fit_cores.end());
  for (VariantId v : suite.VariantsOfTask(task)) {
    const VariantSpec& spec = suite.variants()[v];
    InfAdapterVariantCapacity vc;
    vc.variant = v;
    vc.name = spec.name;
    vc.accuracy = spec.accuracy;
    vc.load_time = spec.load_time;
    vc.headroom = o.headroom;
    std::vector<double> xs, ys;
    std::vector<int> missing;
    for (int c : fit_cores) {
      auto hw = hw_of_cores.find(c);
      auto it = hw == hw_of_cores.end() ? at_slo.end() : at_slo.find({hw->second, v});
      if (it == at_slo.end()) {
        missing.push_back(c);
        continue;
      }
      xs.push_back(c);
      ys.push_back(it->second->capacity_rps);
    }
    if (xs.size() < 2) {
      return NotFoundError("no capacity record for variant " + spec.name + " at " +
                           CoreList(missing) + " cores and SLO " + std::to_string(ToMillis(o.slo)) +
                           " ms (fit_cores): at least two fit points are needed");
    }
    if (!missing.empty()) {
      std::vector<int> used(xs.begin(), xs.end());
      model.notes.push_back(spec.name + ": no capacity record at " + CoreList(missing) +
                            " cores (SLO " + std::to_string(ToMillis(o.slo)) +
                            " ms); the throughput line is fitted on " + CoreList(used) +
                            " cores and interpolates it");
    }
    ASSIGN_OR_RETURN(vc.fit, FitLine(xs, ys));
    vc.p99_by_cores.assign(model.max_profiled_cores, std::nullopt);
    for (const auto& [cores, hw] : hw_of_cores) {
      if (cores < 1) continue;
      std::optional<Duration> p99;
      auto it = at_slo.find({hw, v});
      if (it != at_slo.end() && it->second->p99) p99 = *it->second->p99;
      if (!p99) {
        const auto& sizes = suite.BatchSizes(hw, v);
        if (!sizes.empty()) p99 = suite.Latency(hw, v, sizes.front())->Quantile(0.99);
      }
      vc.p99_by_cores[cores - 1] = p99;
    }
    InterpolateMissingP99(vc, model.notes);
    model.variants.push_back(std::move(vc));
  }
  if (model.variants.empty()) {
    return FailedPreconditionError("task " + suite.tasks()[task].name + " has no variants");
  }
  return model;
}

}  // namespace sloserve

#include "sloserve/exec/service_time_model.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "sloserve/core/declared_key.h"

namespace sloserve {

StatusOr<ServiceTimeOptions> ParseServiceTimeMode(const std::string& text) {
  ServiceTimeOptions o;
  if (text == "sample") {
    o.mode = ServiceTimeOptions::Mode::kSample;
    return o;
  }
  if (text == "capacity") {
    o.mode = ServiceTimeOptions::Mode::kCapacity;
    return o;
  }
  if (text.size() >= 2 && text[0] == 'p') {
    const std::optional<double> p = ParseNumber(std::string_view(text).substr(1));
    if (p && *p >= 0 && *p <= 100) {
      o.mode = ServiceTimeOptions::Mode::kQuantile;
      o.quantile = *p / 100.0;
      return o;
    }
  }
  return InvalidArgumentError("executor latency mode '" + text +
                              "': expected 'sample', 'capacity' or a percentile such as 'p95'");
}

ServiceTimeModel::ServiceTimeModel(const ProfileSuite* suite, ServiceTimeOptions options,
                                   uint64_t seed)
    : suite_(suite),
      options_(options),
      rng_(MakeRng(seed, "service-time")),
      exec_(ExecTimeTable::Build(*suite)) {
  if (options_.mode != ServiceTimeOptions::Mode::kCapacity) return;
  saturation_rps_.assign(suite->hardware().size(),
                         std::vector<double>(suite->variants().size(), 0.0));
  for (const CapacityPoint& c : suite->capacity_points()) {
    double& s = saturation_rps_[c.hardware][c.variant];
    s = std::max(s, c.saturation_rps);
  }
}

bool ServiceTimeModel::DynamicCompute(const RunBatch& b, std::vector<Duration>* solo,
                                      Duration* compute) {
  if (b.queries.empty() || !exec_.IsDynamic(b.variant)) return false;
  auto key = std::make_pair(b.hardware, b.variant);
  auto it = fits_.find(key);
  if (it == fits_.end()) {
    it = fits_
             .emplace(key, FitBatchTimeModel(*suite_, b.hardware, b.variant,
                                             exec_.Pooled(b.variant).Mean()))
             .first;
  }
  if (!it->second.ok()) return false;
  double longest = 0;
  for (const Query& q : b.queries) {
    bool unknown = false;
    const ExecCdf& c = exec_.ForAppOrPooled(b.variant, q.app, &unknown);
    if (unknown) ++unknown_app_draws_;
    const double alone = c.Sample(rng_);
    longest = std::max(longest, alone);
    // Reported as it would be measured: scaled like the batch it ran in.
    if (solo) solo->push_back(Duration(std::llround(alone * options_.time_scale)));
  }
  const double us = it->second->BatchUs(static_cast<int>(b.queries.size()), longest);
  *compute = Duration(std::llround(us));
  return true;
}

Duration ServiceTimeModel::Draw(const LatencyDistribution* d) {
  if (!d || d->empty()) return Duration(0);
  if (options_.mode == ServiceTimeOptions::Mode::kSample) return d->Sample(rng_);
  return d->Quantile(options_.quantile);  // kQuantile, and kCapacity's fallback
}

Duration ServiceTimeModel::Scaled(Duration d) const {
  if (options_.time_scale == 1.0) return d;
  return Duration(
      static_cast<int64_t>(std::llround(static_cast<double>(d.count()) * options_.time_scale)));
}

Duration ServiceTimeModel::LoadDuration(const LoadVariant& load) const {
  return Scaled(suite_->variants()[load.variant].load_time);
}

Duration ServiceTimeModel::BatchDuration(const RunBatch& b, std::vector<Duration>* solo) {
  if (!saturation_rps_.empty()) {
    const double rps = saturation_rps_[b.hardware][b.variant];
    if (rps > 0) return Scaled(SecondsF(std::max(b.rows, 1) / rps));
  }
  Duration compute{0};
  if (DynamicCompute(b, solo, &compute)) return Scaled(compute);
  // ServiceLatency pairs compute and data-loading samples as the Kairos authors do.
  const LatencyDistribution* d = suite_->ServiceLatency(b.hardware, b.variant, b.rows);
  if (d) {
    compute = Draw(d);
  } else {
    int max_rows = suite_->MaxBatch(b.hardware, b.variant);
    if (max_rows > 0) {
      Duration at_max = Draw(suite_->ServiceLatency(b.hardware, b.variant, max_rows));
      compute = Duration(at_max.count() * b.rows / max_rows);
    }
  }
  return Scaled(compute);
}

}  // namespace sloserve

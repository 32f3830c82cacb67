#include "sloserve/workload/arrival_process.h"

#include <cassert>
#include <cmath>

#include "sloserve/workload/random_variates.h"

namespace sloserve {

ArrivalProcess::~ArrivalProcess() = default;

namespace workload_internal {

std::optional<TimePoint> EmitArrival(double t_us, int64_t horizon_us, bool& done) {
  const double up = std::ceil(t_us);
  if (up >= static_cast<double>(horizon_us)) {
    done = true;
    return std::nullopt;
  }
  // t_us > 0 always (gaps are added to 0), but a zero gap at the start would give 0.
  const auto us = static_cast<int64_t>(up);
  return AtMicros(us < 1 ? 1 : us);
}

}  // namespace workload_internal

using workload_internal::EmitArrival;

PoissonArrivals::PoissonArrivals(double rate_qps, Duration horizon, Rng rng)
    : mean_gap_us_(1e6 / rate_qps), horizon_us_(horizon.count()), rng_(rng) {
  assert(rate_qps > 0);
}

std::optional<TimePoint> PoissonArrivals::Next() {
  if (done_) return std::nullopt;
  t_us_ += mean_gap_us_ * StdExponential(rng_);
  return EmitArrival(t_us_, horizon_us_, done_);
}

GammaArrivals::GammaArrivals(double rate_qps, double cv, Duration horizon, Rng rng)
    : shape_(1.0 / (cv * cv)),
      scale_us_(cv * cv * 1e6 / rate_qps),
      horizon_us_(horizon.count()),
      rng_(rng) {
  assert(rate_qps > 0 && cv > 0);
}

std::optional<TimePoint> GammaArrivals::Next() {
  if (done_) return std::nullopt;
  t_us_ += scale_us_ * StdGamma(rng_, shape_);
  return EmitArrival(t_us_, horizon_us_, done_);
}

ConstantArrivals::ConstantArrivals(double rate_qps, Duration horizon)
    : period_us_(1e6 / rate_qps), horizon_us_(horizon.count()) {
  assert(rate_qps > 0);
}

std::optional<TimePoint> ConstantArrivals::Next() {
  if (done_) return std::nullopt;
  ++k_;
  return EmitArrival(static_cast<double>(k_) * period_us_, horizon_us_, done_);
}

}  // namespace sloserve

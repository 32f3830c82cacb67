#pragma once
// Arrival processes: pull-based, lazy generators of request arrival times under virtual
// time. Nothing here reads a clock or sleeps; the engine/simulator pulls `Next()` and
// schedules the arrival itself.
//
// Contract for every implementation:
//   - `Next()` returns successive arrival times, non-decreasing, each strictly after
//     kTimeZero and strictly before the process horizon; then nullopt forever.
//   - Internally time is a double in microseconds (no drift from accumulated rounding);
//     each arrival is reported rounded UP to the next whole microsecond.
//   - O(1) and allocation-free per call (trace processes skip zero-rate intervals,
//     amortized O(1)).
//   - Same Rng state => identical sequence.
#include <cstdint>
#include <optional>

#include "sloserve/core/rng.h"
#include "sloserve/core/time.h"

namespace sloserve {

class ArrivalProcess {
 public:
  virtual ~ArrivalProcess();
  virtual std::optional<TimePoint> Next() = 0;
};

namespace workload_internal {
// Shared by the implementations: rounds a double time in µs up to the reported TimePoint,
// or returns nullopt (and sets `done`) once that reaches `horizon_us`.
std::optional<TimePoint> EmitArrival(double t_us, int64_t horizon_us, bool& done);
}  // namespace workload_internal

// Homogeneous Poisson process: exponential inter-arrivals with mean 1/rate_qps.
// Requires rate_qps > 0.
class PoissonArrivals final : public ArrivalProcess {
 public:
  PoissonArrivals(double rate_qps, Duration horizon, Rng rng);
  std::optional<TimePoint> Next() override;

 private:
  double mean_gap_us_;
  int64_t horizon_us_;
  Rng rng_;
  double t_us_ = 0.0;
  bool done_ = false;
};

// Renewal process with Gamma inter-arrivals: mean 1/rate_qps and coefficient of
// variation `cv` (shape 1/cv^2, scale cv^2/rate). cv = 1 is Poisson, cv < 1 is smoother,
// cv > 1 burstier. Requires rate_qps > 0, cv > 0.
class GammaArrivals final : public ArrivalProcess {
 public:
  GammaArrivals(double rate_qps, double cv, Duration horizon, Rng rng);
  std::optional<TimePoint> Next() override;

 private:
  double shape_;
  double scale_us_;
  int64_t horizon_us_;
  Rng rng_;
  double t_us_ = 0.0;
  bool done_ = false;
};

// Deterministic arrivals at k / rate_qps seconds, k = 1, 2, ... Requires rate_qps > 0.
class ConstantArrivals final : public ArrivalProcess {
 public:
  ConstantArrivals(double rate_qps, Duration horizon);
  std::optional<TimePoint> Next() override;

 private:
  double period_us_;
  int64_t horizon_us_;
  int64_t k_ = 0;
  bool done_ = false;
};

}  // namespace sloserve

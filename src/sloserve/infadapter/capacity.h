#pragma once
// InfAdapter's capacity model (Salmani et al., "Reconciling High Accuracy,
// Cost-Efficiency, and Low Latency of Inference Serving Systems", EuroMLSys'23, section 3;
// docs/infadapter.md). Per model variant m:
//   th_m(n) = headroom * (a_m + b_m * n)   requests/s that n CPU cores sustain under the SLO,
// a straight line fitted by least squares on the profiled capacity points (the highest
// RPS that meets the SLA) at the chosen SLO and core counts (the reference code fits at
// 1, 2, 4, 8, 16 cores, SLO 750 ms, and uses 80% of it), and
//   p_m(n) = the measured p99 at n cores (no fit: a (variant, cores) pair whose p99
// exceeds the SLO is infeasible).
// A capacity table with a core count missing is interpolated and says so (model.notes):
// a fit point without a record is left out of the fit (the line through the others
// interpolates it; at least two must remain), and a core count without a p99 between
// two that have one gets the p99 linearly interpolated between them. Above the largest
// or below the smallest profiled core count nothing is extrapolated (infeasible).
#include <optional>
#include <string>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

// y = intercept + slope * x, with its error over the points it was fitted on.
struct LineFit {
  double intercept = 0;
  double slope = 0;
  double rmse = 0;                // root mean squared residual, in y's unit
  double max_relative_error = 0;  // max |fit - y| / |y| over the points with y != 0
  int points = 0;
};

// Ordinary least squares. Needs as many x as y, at least two distinct x, all finite.
StatusOr<LineFit> FitLine(const std::vector<double>& x, const std::vector<double>& y);

struct InfAdapterCapacityOptions {
  Duration slo = Millis(750);  // the SLA whose capacity records are fitted
  std::vector<int> fit_cores = {1, 2, 4, 8, 16};
  double headroom = 0.8;  // fraction of the fitted capacity used, in (0, 1]
  std::string task;       // "" = the suite's first task
};

struct InfAdapterVariantCapacity {
  VariantId variant = 0;
  std::string name;
  double accuracy = 0;  // percent
  Duration load_time{};
  LineFit fit;  // of the raw capacity (rps), before the headroom
  double headroom = 1;
  // p99_by_cores[k - 1] = the measured p99 at k cores; nullopt = not profiled.
  std::vector<std::optional<Duration>> p99_by_cores;

  // headroom * max(0, a + b * cores); 0 for cores <= 0.
  double Throughput(int cores) const;
  std::optional<Duration> P99(int cores) const;
  // Profiled at `cores`, p99 <= slo, and a positive throughput.
  bool Feasible(int cores, Duration slo) const;
};

struct InfAdapterCapacityModel {
  Duration slo{};
  double headroom = 1;
  int max_profiled_cores = 0;
  std::vector<InfAdapterVariantCapacity> variants;  // the task's variants, in suite order
  // One line per interpolation (variant, what was missing, from what); empty when the
  // table was complete.
  std::vector<std::string> notes;
};

Status ValidateInfAdapterCapacityOptions(const InfAdapterCapacityOptions& options);

// From a suite with capacity records (hardware types = core counts, e.g.
// infadapter-resnet's cpu-<N>c). p_m(n): the capacity record's p99 at the SLO, else the
// suite's latency at batch 1 on that hardware (its p99 quantile), else interpolated.
// Errors: bad options (InvalidArgument naming the field), no capacity records
// (FailedPrecondition), fewer than two fit points with a record (NotFound naming variant
// and cores).
StatusOr<InfAdapterCapacityModel> BuildInfAdapterCapacity(
    const ProfileSuite& suite, const InfAdapterCapacityOptions& options = {});

}  // namespace sloserve

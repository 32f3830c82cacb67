#pragma once
// Trace replay as a piecewise-constant-rate (non-homogeneous) Poisson process: inside
// interval i arrivals are Poisson at rates_qps[i], as the RAMSIS paper replays its
// Twitter trace (10 s intervals) and as sloserve replays per-second RPS traces. Exact:
// by memorylessness, a draw that overshoots an interval's end is discarded and the
// clock restarts at the boundary with the next interval's rate.
#include <cstdint>
#include <optional>
#include <vector>

#include "sloserve/workload/arrival_process.h"
#include "sloserve/workload/trace_file.h"

namespace sloserve {

class TraceArrivals final : public ArrivalProcess {
 public:
  // Replays `series` (rates already scaled/windowed, see EffectiveRateSeries) from time
  // zero until min(horizon, series.Span()). A non-positive horizon means the whole series.
  TraceArrivals(const RateSeries& series, Duration horizon, Rng rng);
  std::optional<TimePoint> Next() override;

 private:
  std::vector<double> mean_gap_us_;  // per interval; 0 = no arrivals in it
  int64_t step_us_;
  int64_t horizon_us_;
  Rng rng_;
  size_t seg_ = 0;
  double seg_end_us_;
  double t_us_ = 0.0;
  bool done_ = false;
};

}  // namespace sloserve

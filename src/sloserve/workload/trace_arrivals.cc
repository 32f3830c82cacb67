#include "sloserve/workload/trace_arrivals.h"

#include <algorithm>

#include "sloserve/workload/random_variates.h"

namespace sloserve {

TraceArrivals::TraceArrivals(const RateSeries& series, Duration horizon, Rng rng)
    : step_us_(series.step.count()),
      horizon_us_(horizon > Duration(0) ? std::min(horizon, series.Span()).count()
                                        : series.Span().count()),
      rng_(rng),
      seg_end_us_(static_cast<double>(series.step.count())) {
  mean_gap_us_.reserve(series.rates_qps.size());
  for (double r : series.rates_qps) mean_gap_us_.push_back(r > 0 ? 1e6 / r : 0.0);
}

std::optional<TimePoint> TraceArrivals::Next() {
  while (!done_ && seg_ < mean_gap_us_.size()) {
    const double gap = mean_gap_us_[seg_];
    if (gap > 0) {
      const double t = t_us_ + gap * StdExponential(rng_);
      if (t < seg_end_us_) {
        t_us_ = t;
        return workload_internal::EmitArrival(t_us_, horizon_us_, done_);
      }
    }
    // No arrival left in this interval: restart at its end with the next rate.
    t_us_ = seg_end_us_;
    ++seg_;
    seg_end_us_ = static_cast<double>(static_cast<int64_t>(seg_ + 1) * step_us_);
    if (t_us_ >= static_cast<double>(horizon_us_)) done_ = true;
  }
  done_ = true;
  return std::nullopt;
}

}  // namespace sloserve

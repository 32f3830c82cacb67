#pragma once
// Per-interval latency quantiles for the simulator's time series (`sim --json --series`,
// field `p99_ms`). The engine's own series keeps only counts, so serve's memory stays
// bounded; a simulation is finite, so here every completed query's latency is kept (8
// bytes each, grouped by the interval of its arrival) and the quantile is exact. Only
// runs that ask for it (RunSpec::series_latency) pay for it.
#include <cstdint>
#include <vector>

#include "sloserve/core/time.h"
#include "sloserve/engine/query_record.h"

namespace sloserve {

class IntervalLatencies {
 public:
  explicit IntervalLatencies(Duration interval) : interval_(interval) {}

  // Completed queries only (drops have no latency), as the run's p99 counts them.
  void Add(const QueryRecord& r);

  // Quantile q in [0,1] of each interval 0..n-1 in ms, by linear interpolation between
  // order statistics (as the summary's percentiles); 0 for an interval without
  // completed queries.
  std::vector<double> QuantileMs(double q, size_t n) const;

 private:
  Duration interval_;
  std::vector<std::vector<int64_t>> latencies_us_;  // by arrival interval
};

}  // namespace sloserve

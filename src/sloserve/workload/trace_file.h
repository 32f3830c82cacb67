#pragma once
// Rate traces: loaders for the two trace formats sloserve replays, as a piecewise-constant
// rate series (also what reports plot).
//
// - QPS-per-interval (RAMSIS Twitter trace, datasets/ramsis/twitter_04_25_norm.txt):
//   lines `<seconds> <value>`, one per interval (10 s in that file), value / 1e6 queries
//   per microsecond, i.e. `value` queries per second. Interval starts must be evenly
//   spaced and increasing; times are taken relative to the first line.
// - RPS-per-second (InfAdapter Twitter trace, datasets/infadapter/twitter_rps_per_second.txt):
//   whitespace-separated non-negative integers (any number per line), one per second.
//
// In both, blank lines and lines whose first non-blank character is '#' are ignored.
// Malformed content yields InvalidArgument naming `file:line`.
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"

namespace sloserve {

// rates_qps[i] holds over [i * step, (i + 1) * step).
struct RateSeries {
  Duration step = Seconds(1);
  std::vector<double> rates_qps;

  Duration Span() const { return step * static_cast<int64_t>(rates_qps.size()); }
  // Expected number of arrivals: sum of rate x step.
  double ExpectedCount() const;
  // Time-weighted mean rate; 0 for an empty series.
  double MeanQps() const;
};

StatusOr<RateSeries> LoadQpsIntervalTrace(const std::string& path);
StatusOr<RateSeries> LoadRpsTrace(const std::string& path);

// Parse already-read text; `name` is used in error messages only.
StatusOr<RateSeries> ParseQpsIntervalTrace(std::string_view text, std::string_view name);
StatusOr<RateSeries> ParseRpsTrace(std::string_view text, std::string_view name);

// Reads a whole file (or an embedded one: "embedded:traces/NAME"); NotFound naming the
// path if it cannot be opened.
StatusOr<std::string> ReadTextFile(const std::string& path);

}  // namespace sloserve

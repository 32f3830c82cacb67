#pragma once
// ArrivalSpec: the plain, config-parsable description of an arrival process, and the
// factory that validates it and builds the process. Validation messages name the field
// ("arrival spec: rate_qps must be > 0 for kind 'poisson' (got -3)").
//
// Kinds and the fields they use:
//   poisson             rate_qps, horizon
//   gamma               rate_qps, cv, horizon
//   constant            rate_qps, horizon
//   qps_interval_trace  trace_path (RAMSIS `<seconds> <value>` file), rate_scale,
//                       window_start_s/window_end_s, time_compression, horizon (optional cut)
//   rps_trace           trace_path (per-second RPS file), same optional fields
//
// Trace transforms, applied in this order: window [window_start_s, window_end_s) of the
// file (in trace seconds; must fall on interval boundaries), every rate x rate_scale, then
// time compression c: each trace interval is replayed in 1/c of its length with the same
// expected number of requests (rates x c). The replay starts at time zero.
#include <cstdint>
#include <memory>
#include <string>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/workload/arrival_process.h"
#include "sloserve/workload/trace_file.h"

namespace sloserve {

struct ArrivalSpec {
  std::string kind = "poisson";
  double rate_qps = 0.0;           // poisson, gamma, constant: mean arrival rate
  double cv = 1.0;                 // gamma: coefficient of variation of inter-arrivals
  std::string trace_path;          // traces: file to replay
  int64_t window_start_s = 0;      // traces: first trace second replayed
  int64_t window_end_s = -1;       // traces: one past the last second; -1 = end of trace
  double rate_scale = 1.0;         // traces: multiplies every rate
  double time_compression = 1.0;   // traces: replay speed-up, count-preserving
  Duration horizon = Duration(0);  // synthetic: required > 0; traces: 0 = whole trace
};

// Ranges every spec must keep (docs/sim.md "Ranges"). Past them the simulator cannot
// finish: a gap below the clock's microsecond (rate > 1e6 qps) never advances time, a cv
// whose square over- or underflows makes gamma gaps 0 or NaN, and the arrival count
// grows past what a run can hold.
inline constexpr double kMaxArrivalRateQps = 1e6;  // one arrival per microsecond
inline constexpr double kMinGammaCv = 1e-3;
inline constexpr double kMaxGammaCv = 100;
inline constexpr double kMaxRateScale = 1e6;
inline constexpr double kMaxTimeCompression = 1e6;
inline constexpr int64_t kMaxTraceSecond = 1'000'000'000;  // window bounds, in trace seconds
// Mean rate x horizon of a synthetic process: a run holds about 100 bytes per query
// (10^7 queries: 1.0 GB), so 10^8 is some 10 GB.
inline constexpr double kMaxExpectedArrivals = 1e8;

// Checks fields without touching the file system.
Status ValidateArrivalSpec(const ArrivalSpec& spec);

// The rate series the process will follow (after window, scale, compression). For
// synthetic kinds: one interval of length `horizon` at rate_qps (nominal for gamma and
// constant). Loads the trace file for trace kinds.
StatusOr<RateSeries> EffectiveRateSeries(const ArrivalSpec& spec);
// Same, from an already-loaded raw trace (reuse one parse across many runs).
StatusOr<RateSeries> EffectiveRateSeries(const ArrivalSpec& spec, const RateSeries& raw_trace);

// Time-weighted mean rate over [0, effective horizon).
StatusOr<double> MeanRateQps(const ArrivalSpec& spec);

// Validates and builds the process. Randomness comes from MakeRng(seed, "workload/arrivals").
StatusOr<std::unique_ptr<ArrivalProcess>> MakeArrivalProcess(const ArrivalSpec& spec,
                                                             uint64_t seed);
// Trace kinds only: builds from an already-loaded raw trace instead of reading trace_path.
StatusOr<std::unique_ptr<ArrivalProcess>> MakeArrivalProcess(const ArrivalSpec& spec,
                                                             const RateSeries& raw_trace,
                                                             uint64_t seed);

}  // namespace sloserve

#include "sloserve/workload/arrival_spec.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sloserve/workload/trace_arrivals.h"

namespace sloserve {
namespace {

constexpr char kRngStream[] = "workload/arrivals";

bool IsTraceKind(const std::string& kind) {
  return kind == "qps_interval_trace" || kind == "rps_trace";
}
bool IsSyntheticKind(const std::string& kind) {
  return kind == "poisson" || kind == "gamma" || kind == "constant";
}

std::string Num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

Status FieldError(const ArrivalSpec& spec, const std::string& what) {
  return InvalidArgumentError("arrival spec (kind '" + spec.kind + "'): " + what);
}

Status LoadRaw(const ArrivalSpec& spec, RateSeries& out) {
  StatusOr<RateSeries> raw = spec.kind == "rps_trace" ? LoadRpsTrace(spec.trace_path)
                                                      : LoadQpsIntervalTrace(spec.trace_path);
  if (!raw.ok()) return raw.status().WithPrefix("arrival spec field trace_path");
  out = std::move(raw).value();
  return OkStatus();
}

}  // namespace

Status ValidateArrivalSpec(const ArrivalSpec& spec) {
  if (!IsSyntheticKind(spec.kind) && !IsTraceKind(spec.kind)) {
    return InvalidArgumentError("arrival spec: unknown kind '" + spec.kind +
                                "' (expected poisson, gamma, constant, qps_interval_trace or "
                                "rps_trace)");
  }
  if (IsSyntheticKind(spec.kind)) {
    if (!(spec.rate_qps > 0 && spec.rate_qps <= kMaxArrivalRateQps)) {
      return FieldError(spec, "rate_qps must be in (0, " + Num(kMaxArrivalRateQps) + "] (got " +
                                  Num(spec.rate_qps) + ")");
    }
    if (spec.kind == "gamma" && !(spec.cv >= kMinGammaCv && spec.cv <= kMaxGammaCv)) {
      return FieldError(spec, "cv must be in [" + Num(kMinGammaCv) + ", " + Num(kMaxGammaCv) +
                                  "] (got " + Num(spec.cv) + ")");
    }
    if (spec.horizon <= Duration(0)) {
      return FieldError(
          spec, "horizon must be > 0 (got " + std::to_string(spec.horizon.count()) + " us)");
    }
    if (const double expected = spec.rate_qps * ToSeconds(spec.horizon);
        expected > kMaxExpectedArrivals) {
      return FieldError(spec, "rate_qps x horizon expects " + Num(expected) +
                                  " arrivals, more than " + Num(kMaxExpectedArrivals));
    }
    return OkStatus();
  }
  if (spec.trace_path.empty()) return FieldError(spec, "trace_path is required");
  if (!(spec.rate_scale > 0 && spec.rate_scale <= kMaxRateScale)) {
    return FieldError(spec, "rate_scale must be in (0, " + Num(kMaxRateScale) + "] (got " +
                                Num(spec.rate_scale) + ")");
  }
  if (!(spec.time_compression > 0 && spec.time_compression <= kMaxTimeCompression)) {
    return FieldError(spec, "time_compression must be in (0, " + Num(kMaxTimeCompression) +
                                "] (got " + Num(spec.time_compression) + ")");
  }
  if (spec.window_start_s < 0 || spec.window_start_s > kMaxTraceSecond) {
    return FieldError(spec, "window_start_s must be in [0, " + std::to_string(kMaxTraceSecond) +
                                "] (got " + std::to_string(spec.window_start_s) + ")");
  }
  if (spec.window_end_s > kMaxTraceSecond) {
    return FieldError(spec, "window_end_s must be -1 (end of trace) or at most " +
                                std::to_string(kMaxTraceSecond) + " (got " +
                                std::to_string(spec.window_end_s) + ")");
  }
  if (spec.window_end_s != -1 && spec.window_end_s <= spec.window_start_s) {
    return FieldError(spec, "window_end_s must be -1 (end of trace) or > window_start_s (got " +
                                std::to_string(spec.window_end_s) +
                                " <= " + std::to_string(spec.window_start_s) + ")");
  }
  if (spec.horizon < Duration(0)) {
    return FieldError(spec, "horizon must be >= 0 (0 = whole trace)");
  }
  return OkStatus();
}

StatusOr<RateSeries> EffectiveRateSeries(const ArrivalSpec& spec, const RateSeries& raw) {
  RETURN_IF_ERROR(ValidateArrivalSpec(spec));
  if (!IsTraceKind(spec.kind)) {
    return FieldError(spec, "a raw trace applies to trace kinds only");
  }
  const int64_t step_us = raw.step.count();
  const int64_t span_s_floor = raw.Span().count() / 1000000;
  const std::string where = " of trace '" + spec.trace_path + "'";
  auto to_index = [&](int64_t s, const char* field, size_t& index) -> Status {
    const int64_t us = s * 1000000;
    if (us % step_us != 0) {
      return FieldError(spec, std::string(field) + " " + std::to_string(s) +
                                  " s is not on an interval boundary" + where + " (intervals of " +
                                  Num(ToSeconds(raw.step)) + " s)");
    }
    index = static_cast<size_t>(us / step_us);
    if (index > raw.rates_qps.size()) {
      return FieldError(spec, std::string(field) + " " + std::to_string(s) + " s is past the end" +
                                  where + " (" + std::to_string(span_s_floor) + " s long)");
    }
    return OkStatus();
  };
  size_t begin = 0;
  size_t end = raw.rates_qps.size();
  RETURN_IF_ERROR(to_index(spec.window_start_s, "window_start_s", begin));
  if (spec.window_end_s != -1) RETURN_IF_ERROR(to_index(spec.window_end_s, "window_end_s", end));
  if (begin >= end) {
    return FieldError(spec, "window_start_s " + std::to_string(spec.window_start_s) +
                                " s leaves an empty window" + where);
  }
  RateSeries out;
  const double c = spec.time_compression;
  out.step = Duration(static_cast<int64_t>(std::llround(static_cast<double>(step_us) / c)));
  if (out.step <= Duration(0)) {
    return FieldError(spec, "time_compression " + Num(c) + " shrinks an interval below 1 us");
  }
  const double factor = spec.rate_scale * static_cast<double>(step_us) /
                        static_cast<double>(out.step.count());  // count-preserving
  out.rates_qps.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) {
    const double rate = raw.rates_qps[i] * factor;
    // A rate the microsecond clock cannot follow would replay forever (as rate_qps would).
    if (!(rate <= kMaxArrivalRateQps)) {
      return FieldError(spec, "trace second " + Num(ToSeconds(raw.step) * static_cast<double>(i)) +
                                  where + " replays at " + Num(rate) +
                                  " qps after rate_scale and time_compression, more than " +
                                  Num(kMaxArrivalRateQps));
    }
    out.rates_qps.push_back(rate);
  }
  return out;
}

StatusOr<RateSeries> EffectiveRateSeries(const ArrivalSpec& spec) {
  RETURN_IF_ERROR(ValidateArrivalSpec(spec));
  if (IsSyntheticKind(spec.kind)) {
    RateSeries out;
    out.step = spec.horizon;
    out.rates_qps = {spec.rate_qps};
    return out;
  }
  RateSeries raw;
  RETURN_IF_ERROR(LoadRaw(spec, raw));
  return EffectiveRateSeries(spec, raw);
}

StatusOr<double> MeanRateQps(const ArrivalSpec& spec) {
  ASSIGN_OR_RETURN(RateSeries series, EffectiveRateSeries(spec));
  const Duration span = series.Span();
  const Duration horizon = spec.horizon > Duration(0) ? std::min(spec.horizon, span) : span;
  // Time-weighted mean over [0, horizon), counting a partial last interval.
  double count = 0.0;
  const int64_t step = series.step.count();
  for (size_t i = 0; i < series.rates_qps.size(); ++i) {
    const int64_t begin = static_cast<int64_t>(i) * step;
    if (begin >= horizon.count()) break;
    const int64_t len = std::min(step, horizon.count() - begin);
    count += series.rates_qps[i] * static_cast<double>(len) * 1e-6;
  }
  return count / ToSeconds(horizon);
}

StatusOr<std::unique_ptr<ArrivalProcess>> MakeArrivalProcess(const ArrivalSpec& spec,
                                                             const RateSeries& raw_trace,
                                                             uint64_t seed) {
  ASSIGN_OR_RETURN(RateSeries series, EffectiveRateSeries(spec, raw_trace));
  return std::unique_ptr<ArrivalProcess>(
      std::make_unique<TraceArrivals>(series, spec.horizon, MakeRng(seed, kRngStream)));
}

StatusOr<std::unique_ptr<ArrivalProcess>> MakeArrivalProcess(const ArrivalSpec& spec,
                                                             uint64_t seed) {
  RETURN_IF_ERROR(ValidateArrivalSpec(spec));
  Rng rng = MakeRng(seed, kRngStream);
  if (spec.kind == "poisson") {
    return std::unique_ptr<ArrivalProcess>(
        std::make_unique<PoissonArrivals>(spec.rate_qps, spec.horizon, rng));
  }
  if (spec.kind == "gamma") {
    return std::unique_ptr<ArrivalProcess>(
        std::make_unique<GammaArrivals>(spec.rate_qps, spec.cv, spec.horizon, rng));
  }
  if (spec.kind == "constant") {
    return std::unique_ptr<ArrivalProcess>(
        std::make_unique<ConstantArrivals>(spec.rate_qps, spec.horizon));
  }
  RateSeries raw;
  RETURN_IF_ERROR(LoadRaw(spec, raw));
  return MakeArrivalProcess(spec, raw, seed);
}

}  // namespace sloserve

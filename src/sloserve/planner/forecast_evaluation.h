#pragma once
// Scores a load forecaster on a per-second rate trace the way InfAdapter uses it
// (docs/infadapter.md, "Forecaster"): every `stride_s` seconds t in [begin, end), the
// forecaster sees the rates of [t - history_s, t) and predicts the largest rate of
// [t, t + horizon_s). Windows whose history or horizon leaves [begin, end) are skipped,
// so a held-out range is scored without reading outside it.
#include <cstdint>
#include <span>

#include "sloserve/core/status.h"
#include "sloserve/policy/planning/load_forecaster.h"

namespace sloserve {

struct ForecastEvalOptions {
  int64_t begin_s = 0;
  int64_t end_s = -1;  // -1 = the trace's end
  int history_s = 600;
  int horizon_s = 60;
  int stride_s = 60;
  double margin = 0.1;  // the planner's scaling (1 + margin): under_rate_with_margin
  // The dataset second of the trace's first second (a window cut from the dataset, as the
  // embedded day-15 traces are): what a trained forecaster's seconds are compared in.
  int64_t trace_offset_s = 0;
};

struct ForecastScore {
  int64_t windows = 0;
  // Mean |forecast - actual| / actual over windows with actual > 0 (percent).
  double mape_percent = 0;
  // Share of windows (percent) whose forecast is below the actual maximum, without and
  // with the margin; the mean shortfall (rps) over those windows, without the margin.
  double under_percent = 0;
  double under_with_margin_percent = 0;
  double mean_under_rps = 0;
  double mean_forecast_rps = 0;
  double mean_actual_rps = 0;
};

// InvalidArgument naming the field: a range outside the trace or shorter than one
// window, history_s / horizon_s / stride_s < 1, margin outside 0..10; and a range that
// overlaps the seconds a trained forecaster was fitted on (LoadForecaster::TrainedOn).
StatusOr<ForecastScore> EvaluateLoadForecaster(const LoadForecaster& forecaster,
                                               std::span<const double> rates_per_second,
                                               const ForecastEvalOptions& options);

}  // namespace sloserve

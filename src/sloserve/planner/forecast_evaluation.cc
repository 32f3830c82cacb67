#include "sloserve/planner/forecast_evaluation.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace sloserve {

StatusOr<ForecastScore> EvaluateLoadForecaster(const LoadForecaster& forecaster,
                                               std::span<const double> rates,
                                               const ForecastEvalOptions& o) {
  const auto size = static_cast<int64_t>(rates.size());
  const int64_t end = o.end_s < 0 ? size : o.end_s;
  if (o.history_s < 1) return InvalidArgumentError("history_s must be >= 1");
  if (o.horizon_s < 1) return InvalidArgumentError("horizon_s must be >= 1");
  if (o.stride_s < 1) return InvalidArgumentError("stride_s must be >= 1");
  if (!(o.margin >= 0 && o.margin <= 10)) return InvalidArgumentError("margin must be 0..10");
  if (o.begin_s < 0 || end > size || o.begin_s >= end) {
    return InvalidArgumentError("range [" + std::to_string(o.begin_s) + ", " + std::to_string(end) +
                                ") is not inside the trace's " + std::to_string(size) + " seconds");
  }
  if (end - o.begin_s < o.history_s + o.horizon_s) {
    return InvalidArgumentError("range of " + std::to_string(end - o.begin_s) +
                                " s is shorter than one window (history_s + horizon_s = " +
                                std::to_string(o.history_s + o.horizon_s) + " s)");
  }
  const int64_t off = o.trace_offset_s;
  if (const auto trained = forecaster.TrainedOn();
      trained && o.begin_s + off < trained->second && trained->first < end + off) {
    return InvalidArgumentError(
        "range [" + std::to_string(o.begin_s + off) + ", " + std::to_string(end + off) +
        ") of the dataset's seconds overlaps the seconds the forecaster was trained on [" +
        std::to_string(trained->first) + ", " + std::to_string(trained->second) +
        "): score it on held-out seconds");
  }
  ForecastScore s;
  int64_t positive = 0, under = 0, under_margin = 0;
  double ape_sum = 0, under_sum = 0, forecast_sum = 0, actual_sum = 0;
  for (int64_t t = o.begin_s + o.history_s; t + o.horizon_s <= end; t += o.stride_s) {
    const double forecast = forecaster.Forecast(rates.subspan(t - o.history_s, o.history_s));
    const auto next = rates.subspan(t, o.horizon_s);
    const double actual = *std::max_element(next.begin(), next.end());
    ++s.windows;
    forecast_sum += forecast;
    actual_sum += actual;
    if (actual > 0) {
      ++positive;
      ape_sum += std::abs(forecast - actual) / actual;
    }
    if (forecast < actual) {
      ++under;
      under_sum += actual - forecast;
    }
    under_margin += forecast * (1 + o.margin) < actual;
  }
  const auto n = static_cast<double>(s.windows);
  s.mape_percent = positive > 0 ? 100 * ape_sum / static_cast<double>(positive) : 0;
  s.under_percent = 100 * static_cast<double>(under) / n;
  s.under_with_margin_percent = 100 * static_cast<double>(under_margin) / n;
  s.mean_under_rps = under > 0 ? under_sum / static_cast<double>(under) : 0;
  s.mean_forecast_rps = forecast_sum / n;
  s.mean_actual_rps = actual_sum / n;
  return s;
}

}  // namespace sloserve

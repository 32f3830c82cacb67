// Scoring of load forecasters (forecast_evaluation.h) on a hand-made ramp, values
// computed by hand; the refusal to score a trained forecaster on its training seconds.
#include "sloserve/planner/forecast_evaluation.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace sloserve {
namespace {

std::vector<double> Ramp(int n) {
  std::vector<double> r(n);
  std::iota(r.begin(), r.end(), 0.0);  // rate(t) = t
  return r;
}

TEST(ForecastEvaluation, LastValueOnARampByHand) {
  const std::vector<double> rates = Ramp(30);
  auto last = MakeLoadForecaster({"last_value", 60, 0.1}).value();
  ForecastEvalOptions o;
  o.begin_s = 0;
  o.end_s = 20;
  o.history_s = 5;
  o.horizon_s = 3;
  o.stride_s = 4;
  o.margin = 0.5;
  auto s = EvaluateLoadForecaster(*last, rates, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // Windows at t = 5, 9, 13, 17 (t + 3 <= 20): forecast t - 1, actual max = t + 2.
  EXPECT_EQ(s->windows, 4);
  EXPECT_NEAR(s->mape_percent, 100 * (3.0 / 7 + 3.0 / 11 + 3.0 / 15 + 3.0 / 19) / 4, 1e-9);
  EXPECT_DOUBLE_EQ(s->under_percent, 100);
  // 1.5 (t - 1) < t + 2 only for t < 7: one window of four.
  EXPECT_DOUBLE_EQ(s->under_with_margin_percent, 25);
  EXPECT_DOUBLE_EQ(s->mean_under_rps, 3);
  EXPECT_DOUBLE_EQ(s->mean_forecast_rps, (4 + 8 + 12 + 16) / 4.0);
  EXPECT_DOUBLE_EQ(s->mean_actual_rps, (7 + 11 + 15 + 19) / 4.0);
  // moving_max over the whole history is the last value on a ramp too.
  auto max = MakeLoadForecaster({"moving_max", 5, 0.1}).value();
  EXPECT_DOUBLE_EQ(EvaluateLoadForecaster(*max, rates, o)->mape_percent, s->mape_percent);
}

TEST(ForecastEvaluation, WindowsStayInsideTheRange) {
  // A spike just past the range's end must not reach any scored window.
  std::vector<double> rates(40, 10.0);
  rates[30] = 1000;
  auto last = MakeLoadForecaster({"last_value", 60, 0.1}).value();
  ForecastEvalOptions o;
  o.end_s = 30;
  o.history_s = 10;
  o.horizon_s = 5;
  o.stride_s = 1;
  auto s = EvaluateLoadForecaster(*last, rates, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->windows, 16);  // t = 10..25
  EXPECT_DOUBLE_EQ(s->mape_percent, 0);
  EXPECT_DOUBLE_EQ(s->under_percent, 0);
}

class TrainedOnTen : public LoadForecaster {
 public:
  double Forecast(std::span<const double>) const override { return 1; }
  std::optional<std::pair<int64_t, int64_t>> TrainedOn() const override {
    return std::pair<int64_t, int64_t>{0, 10};
  }
};

TEST(ForecastEvaluation, RefusesTheTrainingSecondsAndBadRanges) {
  const std::vector<double> rates = Ramp(40);
  TrainedOnTen trained;
  ForecastEvalOptions o;
  o.history_s = 5;
  o.horizon_s = 5;
  auto overlap = EvaluateLoadForecaster(trained, rates, o);
  ASSERT_FALSE(overlap.ok());
  EXPECT_NE(overlap.status().message().find("trained on [0, 10)"), std::string::npos)
      << overlap.status().ToString();
  o.begin_s = 10;
  EXPECT_TRUE(EvaluateLoadForecaster(trained, rates, o).ok());
  // A trace cut from the dataset (the embedded day-15 traces) is compared in the dataset's
  // seconds: starting at second 10 its second 0 is held out; at 5, it is not.
  o.begin_s = 0;
  o.trace_offset_s = 10;
  EXPECT_TRUE(EvaluateLoadForecaster(trained, rates, o).ok());
  o.trace_offset_s = 5;
  EXPECT_NE(EvaluateLoadForecaster(trained, rates, o).status().message().find("range [5, 45)"),
            std::string::npos);
  o.trace_offset_s = 0;
  o.begin_s = 10;
  o.end_s = 41;
  EXPECT_NE(EvaluateLoadForecaster(trained, rates, o).status().message().find("inside the trace"),
            std::string::npos);
  o.end_s = 19;  // 9 s < one window of 10
  EXPECT_NE(EvaluateLoadForecaster(trained, rates, o).status().message().find("shorter than"),
            std::string::npos);
  o.end_s = -1;
  o.stride_s = 0;
  EXPECT_NE(EvaluateLoadForecaster(trained, rates, o).status().message().find("stride_s"),
            std::string::npos);
}

}  // namespace
}  // namespace sloserve

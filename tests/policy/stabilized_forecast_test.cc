// The stabilised forecast: the margin scales every forecast, scale-up is immediate and
// scale-down waits until the higher forecasts leave the window.
#include "sloserve/policy/planning/stabilized_forecast.h"

#include <gtest/gtest.h>

namespace sloserve {
namespace {

TEST(StabilizedForecastTest, ScaleDownWaitsForTheWindow) {
  StabilizedForecast f(0.1, Seconds(60));
  EXPECT_NEAR(f.Next(kTimeZero, 100), 110, 1e-9);
  EXPECT_NEAR(f.Next(kTimeZero + Seconds(30), 200), 220, 1e-9);  // up at once
  EXPECT_NEAR(f.Next(kTimeZero + Seconds(60), 50), 220, 1e-9);   // 200 still in the window
  EXPECT_NEAR(f.Next(kTimeZero + Seconds(90), 50), 220, 1e-9);   // exactly 60 s old: kept
  EXPECT_NEAR(f.Next(kTimeZero + Seconds(91), 50), 55, 1e-9);
}

TEST(StabilizedForecastTest, NoWindowFollowsTheForecast) {
  StabilizedForecast f(0, Duration::zero());
  EXPECT_EQ(f.Next(kTimeZero, 100), 100);
  EXPECT_EQ(f.Next(kTimeZero + Seconds(1), 10), 10);
}

}  // namespace
}  // namespace sloserve

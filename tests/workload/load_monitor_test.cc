#include "sloserve/workload/load_monitor.h"

#include <cmath>

#include <gtest/gtest.h>

#include "sloserve/workload/arrival_process.h"

namespace sloserve {
namespace {

TEST(LoadMonitorTest, ConstantRateIsExact) {
  LoadMonitor m;  // 500 ms window
  ConstantArrivals arrivals(1000.0, Seconds(10));
  TimePoint last = kTimeZero;
  int64_t n = 0;
  while (auto t = arrivals.Next()) {
    m.Record(*t);
    last = *t;
    if (++n % 997 == 0) {
      // Before one window has passed the estimate uses the elapsed time.
      EXPECT_NEAR(m.RateQps(last), 1000.0, 1000.0 * 2.0 / std::min<double>(n, 500)) << n;
    }
  }
  EXPECT_EQ(m.CountInWindow(last), 500);
  EXPECT_NEAR(m.RateQps(last), 1000.0, 2.0);
  // With no more arrivals the estimate decays to zero after one window.
  EXPECT_NEAR(m.RateQps(last + Millis(250)), 500.0, 2.0);
  EXPECT_EQ(m.RateQps(last + Millis(500)), 0.0);
}

TEST(LoadMonitorTest, PoissonStreamAndConfigurableWindow) {
  LoadMonitor m(LoadMonitor::Options{Seconds(2), kTimeZero});
  PoissonArrivals arrivals(2000.0, Seconds(20), MakeRng(1, "monitor"));
  TimePoint last = kTimeZero;
  while (auto t = arrivals.Next()) {
    m.Record(*t);
    last = *t;
  }
  // ~4000 arrivals in the window: SD 63, 6 SD ~ 9.5%.
  EXPECT_NEAR(m.RateQps(last), 2000.0, 190.0);
  EXPECT_EQ(m.window(), Seconds(2));
}

TEST(LoadMonitorTest, EmptyAndAtOrigin) {
  LoadMonitor m(LoadMonitor::Options{Millis(100), AtMicros(1000)});
  EXPECT_EQ(m.RateQps(AtMicros(1000)), 0.0);
  m.Record(AtMicros(1500));
  EXPECT_NEAR(m.RateQps(AtMicros(2000)), 1000.0, 1e-9);  // 1 arrival in 1 ms elapsed
}

}  // namespace
}  // namespace sloserve

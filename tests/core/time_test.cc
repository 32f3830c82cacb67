#include "sloserve/core/time.h"

#include <gtest/gtest.h>

namespace sloserve {
namespace {

TEST(TimeTest, IntegerConstructorsAreMicroseconds) {
  EXPECT_EQ(Micros(7).count(), 7);
  EXPECT_EQ(Millis(3).count(), 3000);
  EXPECT_EQ(Seconds(2).count(), 2000000);
  EXPECT_EQ(Millis(-4).count(), -4000);
  EXPECT_EQ(Seconds(1), Millis(1000));
  EXPECT_EQ(Millis(1), Micros(1000));
  static_assert(Seconds(1) == Micros(1000000));  // usable at compile time
}

TEST(TimeTest, FloatingPointConversionsRoundToNearestMicrosecond) {
  EXPECT_EQ(SecondsF(1.5).count(), 1500000);
  EXPECT_EQ(SecondsF(0.0000014).count(), 1);    // 1.4 us -> 1
  EXPECT_EQ(SecondsF(0.0000016).count(), 2);    // 1.6 us -> 2
  EXPECT_EQ(SecondsF(-0.0000016).count(), -2);  // symmetric for negatives
  EXPECT_EQ(SecondsF(-0.0000014).count(), -1);
  EXPECT_EQ(MillisF(2.5).count(), 2500);
  EXPECT_EQ(MillisF(0.0004).count(), 0);
  EXPECT_EQ(MillisF(0.0006).count(), 1);
  EXPECT_EQ(MillisF(-0.0006).count(), -1);
  EXPECT_EQ(MillisF(150.0), Millis(150));
}

TEST(TimeTest, ToSecondsAndToMillis) {
  EXPECT_DOUBLE_EQ(ToSeconds(Millis(1500)), 1.5);
  EXPECT_DOUBLE_EQ(ToMillis(Micros(2500)), 2.5);
  EXPECT_DOUBLE_EQ(ToSeconds(Micros(-1)), -1e-6);
  // Round trips through double stay exact at microsecond resolution.
  for (int64_t us : {0LL, 1LL, 999LL, 123456789LL, -42LL}) {
    EXPECT_EQ(SecondsF(ToSeconds(Micros(us))).count(), us);
    EXPECT_EQ(MillisF(ToMillis(Micros(us))).count(), us);
  }
}

TEST(TimeTest, TimePoints) {
  EXPECT_EQ(kTimeZero.time_since_epoch().count(), 0);
  EXPECT_EQ(AtMicros(250).time_since_epoch(), Micros(250));
  EXPECT_EQ(AtMicros(1000) - kTimeZero, Millis(1));
  EXPECT_EQ(kTimeZero + Seconds(3), AtMicros(3000000));
  EXPECT_LT(AtMicros(1), AtMicros(2));
  // Infinity stays far below overflow: adding a year to it is still representable and larger.
  EXPECT_GT(kTimeInfinite, AtMicros(int64_t{1} << 60));
  EXPECT_GT(kTimeInfinite + Seconds(365LL * 24 * 3600), kTimeInfinite);
  static_assert(EngineClock::is_steady);
}

}  // namespace
}  // namespace sloserve

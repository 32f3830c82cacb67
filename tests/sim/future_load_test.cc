#include "sloserve/sim/future_load.h"

#include <gtest/gtest.h>

#include <vector>

namespace sloserve {
namespace {

ArrivalSpec Constant(double qps, Duration horizon) {
  ArrivalSpec spec;
  spec.kind = "constant";
  spec.rate_qps = qps;
  spec.horizon = horizon;
  return spec;
}

// The oracle's counts are the run's own arrivals: replaying the same seeded process.
TEST(FutureLoadTest, CountsTheSameArrivalsTheRunDraws) {
  ArrivalSpec poisson = Constant(200, Seconds(5));
  poisson.kind = "poisson";
  FutureLoad load(&poisson, {}, /*task=*/0, /*seed=*/7);
  auto p = MakeArrivalProcess(poisson, 7);
  ASSERT_TRUE(p.ok());
  std::vector<uint32_t> expected(5, 0);
  while (std::optional<TimePoint> t = (*p)->Next())
    ++expected[t->time_since_epoch().count() / 1'000'000];
  for (int s = 0; s < 5; ++s) {
    EXPECT_EQ(load.PeakQps(0, TimePoint(Seconds(s)), TimePoint(Seconds(s + 1))), expected[s]) << s;
  }
  uint32_t peak = 0;
  for (uint32_t c : expected) peak = std::max(peak, c);
  EXPECT_EQ(load.PeakQps(0, TimePoint(Seconds(0)), TimePoint(Seconds(5))), peak);
  EXPECT_EQ(load.PeakQps(0, TimePoint(Seconds(9)), TimePoint(Seconds(12))), 0);  // after the end
  EXPECT_EQ(load.PeakQps(3, TimePoint(Seconds(0)), TimePoint(Seconds(5))), 0);   // no such model
}

TEST(FutureLoadTest, SeparatesTheModelsOfAMultiModelRun) {
  ArrivalSpec a = Constant(5, Seconds(4));
  ArrivalSpec b = Constant(20, Seconds(2));
  FutureLoad load(&a, {{"a", 0, &a}, {"b", 0, &b}}, /*task=*/0, /*seed=*/1);
  EXPECT_NEAR(load.PeakQps(0, TimePoint(Seconds(0)), TimePoint(Seconds(4))), 5, 1);
  EXPECT_NEAR(load.PeakQps(1, TimePoint(Seconds(0)), TimePoint(Seconds(4))), 20, 1);
  EXPECT_EQ(load.PeakQps(1, TimePoint(Seconds(2)), TimePoint(Seconds(4))), 0);  // b has ended
}

TEST(FutureLoadTest, FunctionAsksTheSharedCounts) {
  ArrivalSpec a = Constant(10, Seconds(3));
  auto f = FuturePeakFunction(std::make_shared<FutureLoad>(&a, std::vector<ModelStream>{}, 0, 1));
  EXPECT_NEAR(f(0, TimePoint(Seconds(1)), TimePoint(Seconds(2))), 10, 1);
}

}  // namespace
}  // namespace sloserve

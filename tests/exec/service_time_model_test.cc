// Per-app execution times in the service-time model (ORLOJ l_B = c0 + c1 k max l_r).
#include "sloserve/exec/service_time_model.h"

#include <gtest/gtest.h>

#include "support/test_suite.h"

namespace sloserve {
namespace {

RunBatch Launch(const std::vector<Query>* qs) {
  RunBatch b;
  b.rows = static_cast<int32_t>(qs->size());
  b.queries = *qs;
  return b;
}

TEST(ServiceTimeModelTest, DynamicBatchRunsAsLongAsItsLongestRequest) {
  ProfileSuite s = testing::DynamicSuite();
  ServiceTimeModel m(&s, ServiceTimeOptions{}, 1);
  // Fitted: c0 = 20 ms, c1 = 10 ms / pooled mean (37.5 ms).
  const double c1 = 10000.0 / 37500.0;
  std::vector<Query> shorts(4), mixed(4);
  mixed[2].app = 1;
  for (int i = 0; i < 50; ++i) {
    const double a = static_cast<double>(m.BatchDuration(Launch(&shorts)).count());
    EXPECT_GE(a, 20000 + c1 * 4 * 10000 - 1);
    EXPECT_LE(a, 20000 + c1 * 4 * 20000 + 1);
    const double b = static_cast<double>(m.BatchDuration(Launch(&mixed)).count());
    EXPECT_GE(b, 20000 + c1 * 4 * 50000 - 1);  // padded to the long request
    EXPECT_LE(b, 20000 + c1 * 4 * 70000 + 1);
  }
  EXPECT_EQ(m.unknown_app_draws(), 0);
  std::vector<Query> unknown(2);
  unknown[0].app = 9;
  m.BatchDuration(Launch(&unknown));
  EXPECT_EQ(m.unknown_app_draws(), 1);
}

// The times alone it drew are reported (for the engine's OnBatchComplete), scaled like
// the batch; a static model reports none.
TEST(ServiceTimeModelTest, ReportsEachRequestsTimeAloneWhenAsked) {
  ProfileSuite s = testing::DynamicSuite();
  ServiceTimeOptions o;
  o.time_scale = 0.5;
  ServiceTimeModel m(&s, o, 1);
  std::vector<Query> mixed(3);
  mixed[1].app = 1;
  std::vector<Duration> solo;
  RunBatch b = Launch(&mixed);
  const double us = static_cast<double>(m.BatchDuration(b, &solo).count());
  ASSERT_EQ(solo.size(), 3u);
  EXPECT_GE(solo[0], Micros(5000));  // "short" [10, 20) ms, halved
  EXPECT_LE(solo[0], Micros(10000));
  EXPECT_GE(solo[1], Micros(25000));  // "long" [50, 70) ms, halved
  EXPECT_LE(solo[1], Micros(35000));
  // The batch is (c0 + c1 k max) / 2 = c0 / 2 + c1 k (max / 2).
  const double c1 = 10000.0 / 37500.0;
  EXPECT_NEAR(us, 10000 + c1 * 3 * static_cast<double>(solo[1].count()), c1 * 3 + 1);
  ProfileSuite st = testing::SmallSuite();
  ServiceTimeModel ms(&st, ServiceTimeOptions{}, 1);
  solo.clear();
  ms.BatchDuration(b, &solo);
  EXPECT_TRUE(solo.empty());
}

TEST(ServiceTimeModelTest, StaticSuitesAndLaunchesWithoutQueriesKeepTheProfileLatency) {
  ProfileSuite s = testing::SmallSuite();
  ServiceTimeModel m(&s, ServiceTimeOptions{}, 1);
  std::vector<Query> qs(3);
  RunBatch b = Launch(&qs);
  EXPECT_EQ(m.BatchDuration(b), Micros(10000 + 2000 * 2));
  ProfileSuite d = testing::DynamicSuite();
  ServiceTimeModel md(&d, ServiceTimeOptions{}, 1);
  b.queries = {};
  b.rows = 4;
  EXPECT_EQ(md.BatchDuration(b), Millis(60));
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

// Loading takes the variant's profiled load time, scaled like everything else.
TEST(ServiceTimeModelTest, LoadTakesTheProfiledLoadTimeScaled) {
  ProfileSuite s = testing::SmallSuite();
  VariantSpec heavy{"heavy", 0, 90.0, 100, Millis(40)};
  const VariantId v = s.AddVariant(heavy);
  LoadVariant load;
  load.variant = v;
  ServiceTimeModel m(&s, ServiceTimeOptions{}, 1);
  EXPECT_EQ(m.LoadDuration(load), Millis(40));
  ServiceTimeOptions half;
  half.time_scale = 0.5;
  ServiceTimeModel mh(&s, half, 1);
  EXPECT_EQ(mh.LoadDuration(load), Millis(20));
  load.variant = 0;  // "fast": no load time
  EXPECT_EQ(mh.LoadDuration(load), Duration(0));
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

// Capacity mode: a batch of r rows takes r / the saturation throughput recorded for its
// (hardware, variant), the largest over the SLA rows; without a record, the quantile.
TEST(ServiceTimeModelTest, CapacityModeServesAtTheSaturationThroughput) {
  auto parsed = ParseServiceTimeMode("capacity");
  ASSERT_TRUE(parsed.ok());
  auto suite = LoadSuite("infadapter-resnet");
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
  const ProfileSuite& s = *suite;
  double saturation = 0;
  for (const CapacityPoint& c : s.capacity_points()) {
    if (c.hardware == 0 && c.variant == 0) saturation = std::max(saturation, c.saturation_rps);
  }
  ASSERT_GT(saturation, 0);
  ServiceTimeModel m(&s, *parsed, 1);
  RunBatch b;
  b.hardware = 0;
  b.variant = 0;
  b.rows = 1;
  EXPECT_EQ(m.BatchDuration(b), SecondsF(1 / saturation));
  b.rows = 3;
  EXPECT_EQ(m.BatchDuration(b), SecondsF(3 / saturation));
  // A suite without capacity records: the profile's quantile as in kQuantile.
  ProfileSuite plain = testing::DynamicSuite();
  ServiceTimeModel q(&plain, ServiceTimeOptions{}, 1), c(&plain, *parsed, 1);
  RunBatch pb;
  pb.rows = 1;
  EXPECT_EQ(c.BatchDuration(pb), q.BatchDuration(pb));
  EXPECT_FALSE(ParseServiceTimeMode("capacities").ok());
}

}  // namespace
}  // namespace sloserve

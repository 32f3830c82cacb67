#include <gtest/gtest.h>

#include <fstream>

#include "policy/policy_test_util.h"
#include "sloserve/policy/selection/jellyfish_plus.h"
#include "sloserve/policy/selection/model_switching.h"
#include "support/temp_dir.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

using testing::MakeWorkers;
using testing::QueueFixture;

// SmallSuite, SLO 100 ms -> budget 50 ms: "fast" (10 + 2(b-1) ms) fits batch 8 at 24 ms
// = 333 qps per worker; "slow" (30 + 5(b-1) ms) fits batch 5 at 50 ms = 100 qps per worker.
std::string Pick(SelectionPolicy& p, const ProfileSuite& suite, double qps) {
  // Feed one second of evenly spaced arrivals, then decide at its end.
  TimePoint t = kTimeZero + Seconds(10);
  const int n = static_cast<int>(qps);
  for (int i = 0; i < n; ++i) {
    t += Micros(static_cast<int64_t>(1e6 / qps));
    p.OnArrival(Query{}, t);
  }
  QueueFixture q;
  q.Add(0, 100);
  WorkerView w;
  SelectionDecision d = p.Choose(w, q.View(), q.View().at(0), t);
  return suite.variants()[d.variant].name + "/" + std::to_string(d.max_rows);
}

std::unique_ptr<SelectionPolicy> Init(std::unique_ptr<SelectionPolicy> p, const ProfileSuite& s) {
  PolicyContext ctx;
  ctx.suite = &s;
  ctx.workers = MakeWorkers(2);
  EXPECT_TRUE(p->Init(ctx).ok());
  return p;
}

TEST(JellyfishPlusTest, MostAccurateVariantWhoseThroughputCoversTheLoad) {
  ProfileSuite suite = testing::SmallSuite();
  auto low = Init(JellyfishPlusSelection::Create({}).value(), suite);
  EXPECT_EQ(Pick(*low, suite, 150), "slow/5");  // 2 x 100 qps > 150
  auto mid = Init(JellyfishPlusSelection::Create({}).value(), suite);
  EXPECT_EQ(Pick(*mid, suite, 400), "fast/8");  // slow covers only 200
  auto high = Init(JellyfishPlusSelection::Create({}).value(), suite);
  EXPECT_EQ(Pick(*high, suite, 2000), "fast/8");  // nothing keeps up: highest throughput
}

TEST(ModelSwitchingTest, MostAccurateVariantWhoseMeasuredP99MeetsTheSlo) {
  ProfileSuite suite = testing::SmallSuite();
  const testing::ScopedTempDir temp("ms-table");
  const std::string path = temp.File("ms_table.csv");
  {
    std::ofstream out(path);
    out << "# test table\n"
        << ResponseLatencyTable::Header() << "\n"
        << "slow,2,100,100,60,0\nslow,2,100,200,95,0\nslow,2,100,300,400,0.5\n"
        << "fast,2,100,100,20,0\nfast,2,100,500,40,0\nfast,2,100,1000,90,0\n";
  }
  auto make = [&] {
    return Init(ModelSwitchingSelection::Create(PolicyParams("t", {{"table", path}})).value(),
                suite);
  };
  EXPECT_EQ(Pick(*make(), suite, 150), "slow/5");   // measured at 200: 95 ms <= 100
  EXPECT_EQ(Pick(*make(), suite, 250), "fast/8");   // slow at 300: 400 ms
  EXPECT_EQ(Pick(*make(), suite, 5000), "fast/8");  // beyond every measurement: fallback
  auto missing = ModelSwitchingSelection::Create(PolicyParams("t", {}));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("table"), std::string::npos);
  auto corrupt =
      ResponseLatencyTable::Parse(ResponseLatencyTable::Header() + "\nslow,2,100,x,1,0\n", "t.csv");
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.status().message().find("t.csv:2"), std::string::npos);
  EXPECT_NE(corrupt.status().message().find("load_qps"), std::string::npos);
}

}  // namespace
}  // namespace sloserve

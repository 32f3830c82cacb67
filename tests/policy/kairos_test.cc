// Kairos query distribution, its baselines (ribbon, drs, clkwrk), single batching and
// the latency predictor, on a hand-made two-type suite.
#include <gtest/gtest.h>

#include <cmath>

#include "policy/kairos_fixtures.h"
#include "policy/policy_test_util.h"
#include "sloserve/policy/batching/single.h"
#include "sloserve/policy/dispatch/clkwrk.h"
#include "sloserve/policy/dispatch/drs.h"
#include "sloserve/policy/dispatch/kairos.h"
#include "sloserve/policy/dispatch/oracle.h"
#include "sloserve/policy/dispatch/ribbon.h"
#include "sloserve/policy/latency_learning/latency_predictor.h"
#include "sloserve/policy/selection/fixed.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace {

using testing::QueueFixture;

using testing::TwoTypeSuite;

// Workers: types given in order (0 = gpu, 1 = cpu).
std::vector<WorkerView> Workers(std::vector<HardwareId> types) {
  auto w = testing::MakeWorkers(static_cast<int>(types.size()), 1);
  for (size_t i = 0; i < types.size(); ++i) w[i].hardware = types[i];
  return w;
}

PolicyContext Ctx(const ProfileSuite& s, const std::vector<WorkerView>& w) {
  PolicyContext c;
  c.suite = &s;
  c.workers = w;
  c.seed = 5;
  c.task = 0;
  c.slo = Millis(100);
  return c;
}

std::unique_ptr<DispatchPolicy> Make(const std::string& name, const ProfileSuite& s,
                                     const std::vector<WorkerView>& w,
                                     std::map<std::string, std::string> opts = {}) {
  PolicyParams p("t", std::move(opts));
  StatusOr<std::unique_ptr<DispatchPolicy>> d = name == "kairos"   ? KairosDispatch::Create(p)
                                                : name == "ribbon" ? RibbonDispatch::Create(p)
                                                : name == "drs"    ? DrsDispatch::Create(p)
                                                                   : ClkwrkDispatch::Create(p);
  EXPECT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(p.CheckAllUsed().ok()) << p.CheckAllUsed().message();
  EXPECT_TRUE((*d)->Init(Ctx(s, w)).ok());
  return std::move(*d);
}

const TimePoint kNow = kTimeZero + Millis(1000);

TEST(HeteroDeploymentTest, CoefficientsRelativeToTheFastestTypeOnTheLargestQuery) {
  ProfileSuite s = TwoTypeSuite();
  auto w = Workers({1, 0, 1});
  HeteroDeployment d;
  ASSERT_TRUE(d.Init(Ctx(s, w), "").ok());
  EXPECT_EQ(d.base, 0u);
  EXPECT_DOUBLE_EQ(d.coefficient[0], 1.0);
  EXPECT_DOUBLE_EQ(d.coefficient[1], 0.25);
  EXPECT_EQ(d.largest_query, 1000);
  EXPECT_EQ(d.types, (std::vector<HardwareId>{0, 1}));
  EXPECT_FALSE(d.Init(Ctx(s, w), "nope").ok());
}

TEST(KairosDispatchTest, LargeQueryToGpuSmallToCpu) {
  ProfileSuite s = TwoTypeSuite();
  auto w = Workers({1, 0});  // worker 0 cpu, worker 1 gpu
  auto p = Make("kairos", s, w);
  QueueFixture q;
  q.Add(1000, 100, 10);    // small
  q.Add(1000, 100, 1000);  // large
  std::vector<Assignment> out;
  p->Assign(q.View(), w, kNow, &out);
  ASSERT_EQ(out.size(), 2u);
  for (const Assignment& a : out) {
    const int size = q.View().at(a.position).size;
    EXPECT_EQ(a.worker, size == 1000 ? 1u : 0u) << size;
  }
}

TEST(KairosDispatchTest, MatchToBusyInstanceStaysCentral) {
  ProfileSuite s = TwoTypeSuite();
  auto w = Workers({0, 1});
  w[0].busy = true;
  w[0].busy_until = kNow + Millis(10);  // gpu frees in 10 ms: 60 ms total, within QoS
  auto p = Make("kairos", s, w);
  QueueFixture q;
  q.Add(1000, 100, 1000);  // on the cpu: 200 ms > 98 ms -> penalty
  std::vector<Assignment> out;
  p->Assign(q.View(), w, kNow, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(static_cast<KairosDispatch*>(p.get())->solves(), 1);
}

TEST(KairosDispatchTest, DoomedQueryIsServedWhereMatchedOthersWait) {
  ProfileSuite s = TwoTypeSuite();
  auto w = Workers({0, 1});
  w[0].busy = true;
  w[0].busy_until = kNow + Millis(10);
  auto p = Make("kairos", s, w);
  QueueFixture q;
  q.Add(910, 100, 1000);  // waited 90 ms: 50 ms alone on the gpu already misses 98 ms
  std::vector<Assignment> out;
  p->Assign(q.View(), w, kNow, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].worker, 1u);  // penalty x C: the cpu's penalty is the cheaper one
}

TEST(KairosDispatchTest, NoIdleInstanceNoSolveAndWindowBoundsRows) {
  ProfileSuite s = TwoTypeSuite();
  auto w = Workers({0, 1});
  w[0].busy = w[1].busy = true;
  w[0].busy_until = w[1].busy_until = kNow + Millis(5);
  auto p = Make("kairos", s, w, {{"kairos_window", "1"}});
  QueueFixture q;
  for (int i = 0; i < 3; ++i) q.Add(1000, 100, 10);
  std::vector<Assignment> out;
  p->Assign(q.View(), w, kNow, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(static_cast<KairosDispatch*>(p.get())->solves(), 0);
  w[0].busy = w[1].busy = false;
  p->Assign(q.View(), w, kNow, &out);
  ASSERT_EQ(out.size(), 1u);  // only the first query is considered
  EXPECT_EQ(out[0].position, 0u);
}

TEST(KairosDispatchTest, InactiveWorkersAreIgnored) {
  ProfileSuite s = TwoTypeSuite();
  auto w = Workers({0, 1});
  w[0].active = false;
  auto p = Make("kairos", s, w);
  QueueFixture q;
  q.Add(1000, 100, 10);
  std::vector<Assignment> out;
  p->Assign(q.View(), w, kNow, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].worker, 1u);
}

TEST(KairosDispatchTest, OnlineModeLearnsFromBusyUntil) {
  ProfileSuite s = TwoTypeSuite();
  auto w = Workers({0});
  auto p = Make("kairos", s, w, {{"predict", "online"}});
  auto* k = static_cast<KairosDispatch*>(p.get());
  QueueFixture q;
  q.Add(1000, 100, 100);
  std::vector<Assignment> out;
  p->Assign(q.View(), w, kNow, &out);
  ASSERT_EQ(out.size(), 1u);
  // The engine launched it: busy until now + 12 ms.
  w[0].busy = true;
  w[0].busy_until = kNow + Millis(12);
  QueueFixture empty;
  out.clear();
  p->Assign(empty.View(), w, kNow + Millis(1), &out);
  EXPECT_EQ(k->predictor().online_model(0, 0).observations(), 1);
  EXPECT_EQ(k->predictor().Predict(0, 0, 100), Millis(12));
  EXPECT_EQ(k->predictor().Predict(0, 0, 200), Millis(24));  // proportional after one
}

TEST(KairosDispatchTest, WorkersAddedAfterInitGetFreshState) {
  for (const auto& [name, predict] : std::vector<std::pair<std::string, std::string>>{
           {"kairos", "mean"}, {"kairos", "online"}, {"clkwrk", "mean"}, {"clkwrk", "online"}}) {
    SCOPED_TRACE(name + " " + predict);
    ProfileSuite s = TwoTypeSuite();
    auto w = Workers({1, 0});  // Init sees worker 0 (cpu) and 1 (gpu)
    auto p = Make(name, s, w, {{"predict", predict}});
    w[1].busy = true;  // the gpu is busy for 60 ms: a large query there misses its QoS
    w[1].busy_until = kNow + Millis(60);
    // A gpu the engine added after Init, id n+3: views need not be indexed by id.
    w.push_back(testing::AddedWorker(w[1], 2 + 3));
    QueueFixture q;
    q.Add(1000, 100, 1000);
    std::vector<Assignment> out;
    p->Assign(q.View(), w, kNow, &out);
    ASSERT_EQ(out.size(), 1u);
    // (Online prediction knows nothing yet, so every worker looks equally fast.)
    if (predict == "mean") {
      EXPECT_EQ(out[0].worker, 5u);
    }
    const size_t j = out[0].worker == 5 ? 2 : out[0].worker;
    // The engine launched it where it went; the policy syncs that worker's state.
    w[j].busy = true;
    w[j].busy_until = kNow + Millis(50);
    QueueFixture empty;
    out.clear();
    p->Assign(empty.View(), w, kNow + Millis(1), &out);
    EXPECT_TRUE(out.empty());
    if (name == "kairos" && predict == "online") {  // it learnt from the launch it saw
      auto* k = static_cast<KairosDispatch*>(p.get());
      EXPECT_EQ(k->predictor().online_model(w[j].hardware, 0).observations(), 1);
    }
  }
}

TEST(KairosDispatchTest, BadOptions) {
  for (auto [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"predict", "p200"},
                                                        {"predict", "median"},
                                                        {"qos_factor", "0"},
                                                        {"penalty", "0.5"},
                                                        {"kairos_window", "0"},
                                                        {"prediction_noise", "-1"}}) {
    PolicyParams p("t", {{key, value}});
    auto d = KairosDispatch::Create(p);
    ASSERT_FALSE(d.ok()) << key << "=" << value;
    EXPECT_NE(d.status().message().find(key), std::string::npos) << d.status().message();
  }
}

TEST(RibbonDispatchTest, FcfsPreferringTheBaseType) {
  ProfileSuite s = TwoTypeSuite();
  auto w = Workers({1, 0, 1});
  w[2].busy = true;
  auto p = Make("ribbon", s, w);
  QueueFixture q;
  q.Add(1000, 100, 10);
  q.Add(1001, 100, 1000);
  q.Add(1002, 100, 10);
  std::vector<Assignment> out;
  p->Assign(q.View(), w, kNow, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].position, 0u);
  EXPECT_EQ(out[0].worker, 1u);  // the gpu, although worker 0 (cpu) comes first
  EXPECT_EQ(out[1].position, 1u);
  EXPECT_EQ(out[1].worker, 0u);  // the 1000-row query lands on the cpu: no QoS check
}

TEST(DrsDispatchTest, ThresholdSplitsByClassAndHomogeneousFallsBack) {
  ProfileSuite s = TwoTypeSuite();
  auto w = Workers({1, 0});
  auto p = Make("drs", s, w, {{"drs_threshold", "100"}});
  QueueFixture q;
  q.Add(1000, 100, 500);
  q.Add(1001, 100, 10);
  std::vector<Assignment> out;
  p->Assign(q.View(), w, kNow, &out);
  ASSERT_EQ(out.size(), 2u);
  for (const Assignment& a : out) EXPECT_EQ(a.worker, a.position == 0 ? 1u : 0u);
  // Only the cpu idle: the large query waits for the gpu.
  w[1].busy = true;
  QueueFixture large;
  large.Add(1000, 100, 500);
  out.clear();
  p->Assign(large.View(), w, kNow, &out);
  EXPECT_TRUE(out.empty());
  // Homogeneous deployment: small queries go to the base type too.
  auto hw = Workers({0});
  auto h = Make("drs", s, hw, {{"drs_threshold", "100"}});
  QueueFixture small;
  small.Add(1000, 100, 10);
  out.clear();
  h->Assign(small.View(), hw, kNow, &out);
  ASSERT_EQ(out.size(), 1u);
}

TEST(ClkwrkDispatchTest, EarliestFeasibleFinishElseEarliestFinish) {
  ProfileSuite s = TwoTypeSuite();
  auto w = Workers({0, 1});
  w[0].busy = true;
  w[0].busy_until = kNow + Millis(60);
  auto p = Make("clkwrk", s, w);
  QueueFixture q;
  q.Add(1000, 100, 100);   // gpu 70 ms, cpu 20 ms -> cpu
  q.Add(1000, 100, 1000);  // gpu 110, cpu 20+200 -> none feasible -> gpu (earliest)
  q.Add(1000, 100, 100);   // gpu 110+10=120 > 98, cpu 20+20=40 -> cpu queue
  std::vector<Assignment> out;
  p->Assign(q.View(), w, kNow, &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].worker, 1u);
  EXPECT_EQ(out[1].worker, 0u);
  EXPECT_EQ(out[2].worker, 1u);
}

TEST(SingleBatchingTest, OneQueryAtATimeOldestFirstOversizeRejected) {
  ProfileSuite s = TwoTypeSuite();
  auto w = Workers({0});
  auto sel = FixedSelection::Create(PolicyParams()).value();
  auto b = SingleBatching::Create(PolicyParams(), std::move(sel)).value();
  ASSERT_TRUE(b->Init(Ctx(s, w)).ok());
  QueueFixture q;
  q.Add(1000, 100, 300);
  q.Add(1001, 100, 20);
  BatchDecision d;
  b->NextBatch(w[0], q.View(), kNow, &d);
  EXPECT_EQ(d.kind, BatchDecision::Kind::kRun);
  EXPECT_EQ(d.take, (std::vector<uint32_t>{0}));
  QueueFixture big;
  big.Add(1000, 100, 5000);
  b->NextBatch(w[0], big.View(), kNow, &d);
  EXPECT_TRUE(d.take.empty());
  EXPECT_EQ(d.reject, (std::vector<uint32_t>{0}));
}

TEST(LatencyPredictorTest, ProfileMeanQuantileRoundUpAndScaling) {
  ProfileSuite s = TwoTypeSuite();
  LatencyPredictor mean;
  ASSERT_TRUE(mean.Init(s, 1).ok());
  EXPECT_EQ(mean.Predict(0, 0, 10), Millis(2));
  EXPECT_EQ(mean.Predict(0, 0, 11), Millis(10));     // rounds up to the next profiled size
  EXPECT_EQ(mean.Predict(1, 0, 2000), Millis(400));  // beyond: linear in rows
  auto o = LatencyPredictor::ParseOptions(PolicyParams("t", {{"predict", "p99"}})).value();
  EXPECT_DOUBLE_EQ(o.quantile, 0.99);
}

TEST(LatencyPredictorTest, OnlineLinearThenTable) {
  OnlineLatencyModel m(10, 3);
  EXPECT_EQ(m.Predict(50), Duration(0));
  m.Observe(10, Millis(1));
  m.Observe(100, Millis(10));
  EXPECT_NEAR(static_cast<double>(m.Predict(50).count()), 5000, 1);  // the line
  EXPECT_FALSE(m.FromTable(50));
  for (int i = 0; i < 3; ++i) m.Observe(45, Millis(7));  // bucket 50 (41..50)
  EXPECT_TRUE(m.FromTable(50));
  EXPECT_EQ(m.Predict(50), Millis(7));
}

TEST(LatencyPredictorTest, GaussianNoiseHasTheConfiguredRelativeSpread) {
  ProfileSuite s = TwoTypeSuite();
  LatencyPredictor::Options o;
  o.noise = 0.05;
  LatencyPredictor p(o), again(o);
  ASSERT_TRUE(p.Init(s, 9).ok());
  ASSERT_TRUE(again.Init(s, 9).ok());
  double sum = 0, sq = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double x = static_cast<double>(p.PredictNoisy(0, 0, 1000).count());
    EXPECT_EQ(x, static_cast<double>(again.PredictNoisy(0, 0, 1000).count()));  // seeded
    sum += x;
    sq += x * x;
  }
  const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  EXPECT_NEAR(mean, 50000, 100);
  EXPECT_NEAR(sd / 50000, 0.05, 0.003);
}

TEST(OracleTest, BaseTakesLargestAuxiliaryTakesSmallestNoQosViolation) {
  ProfileSuite s = TwoTypeSuite();
  LatencyPredictor p;
  ASSERT_TRUE(p.Init(s, 1).ok());
  // gpu: 1000 (0-50 ms), 1000 (50-100); cpu: 10 (0-1), 10 (1-2), then 1000 would take
  // 200 ms > QoS: the cpu retires. 4 queries in 100 ms.
  auto r = OracleThroughput(p, 0, {{0, 1}, {1, 1}}, Millis(100), 1000, {1000, 10, 1000, 10});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->served, 4);
  EXPECT_EQ(r->skipped, 0);
  EXPECT_NEAR(r->qps, 40.0, 1e-9);
  // A QoS the base type misses for the largest queries: they are skipped, not counted.
  auto tight = OracleThroughput(p, 0, {{0, 1}, {1, 1}}, Millis(30), 1000, {1000, 10, 100});
  ASSERT_TRUE(tight.ok());
  EXPECT_EQ(tight->served, 2);
  EXPECT_EQ(tight->skipped, 1);
  EXPECT_FALSE(OracleThroughput(p, 0, {}, Millis(100), 1000, {10}).ok());
  EXPECT_FALSE(OracleThroughput(p, 0, {{0, 1}}, Millis(100), 1000, {}).ok());
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

// Two models on disjoint types: "x" only on cpu, "y" only on gpu.
ProfileSuite DisjointSuite() {
  ProfileSuite s;
  const TaskId x = s.AddTask(TaskSpec{"x", Millis(100)});
  const TaskId y = s.AddTask(TaskSpec{"y", Millis(100)});
  const HardwareId cpu = s.AddHardware(HardwareSpec{"cpu", 1.0, 4, 0});
  const HardwareId gpu = s.AddHardware(HardwareSpec{"gpu", 3.0, 8, 0});
  const VariantId x1 = s.AddVariant(VariantSpec{"x1", x, 70, 100, Millis(10)});
  const VariantId y1 = s.AddVariant(VariantSpec{"y1", y, 70, 100, Millis(10)});
  for (int k = 1; k <= 4; ++k) {
    s.AddLatency(cpu, x1, k, LatencyDistribution(std::vector<int64_t>(3, 1000 * k)));
    s.AddLatency(gpu, y1, k, LatencyDistribution(std::vector<int64_t>(3, 500 * k)));
  }
  return s;
}

TEST(KairosMultiModelTest, AQueryIsMatchedOnlyToInstancesServingItsModel) {
  const ProfileSuite s = DisjointSuite();
  for (const char* name : {"kairos", "ribbon", "drs", "clkwrk"}) {
    SCOPED_TRACE(name);
    auto w = testing::MakeWorkers(2, s.variants().size());
    w[0].hardware = 0;  // cpu: x only
    w[1].hardware = 1;  // gpu: y only
    PolicyContext c;
    c.suite = &s;
    c.workers = w;
    c.seed = 5;
    auto d = name == std::string("kairos")   ? KairosDispatch::Create(PolicyParams("t", {}))
             : name == std::string("ribbon") ? RibbonDispatch::Create(PolicyParams("t", {}))
             : name == std::string("drs")    ? DrsDispatch::Create(PolicyParams("t", {}))
                                             : ClkwrkDispatch::Create(PolicyParams("t", {}));
    ASSERT_TRUE(d.ok());
    ASSERT_TRUE((*d)->Init(c).ok());  // a type without the first model's variant is fine
    QueueFixture q;
    q.Add(900, 100);
    q.table.back().task = 1;  // y: the gpu serves it, though the cpu comes first
    q.Add(901, 100);
    q.table.back().task = 0;  // x: the cpu
    std::vector<Assignment> out;
    (*d)->Assign(q.View(), w, kNow, &out);
    ASSERT_EQ(out.size(), 2u);
    for (const Assignment& a : out) {
      EXPECT_EQ(w[a.worker].hardware, q.View().at(a.position).task) << a.position;
    }
    // Only the gpu idle: the x query never goes there (kairos, ribbon and drs keep it
    // central; clkwrk queues it at the busy cpu, as it routes every arrival at once).
    QueueFixture only_x;
    only_x.Add(950, 100);
    w[0].busy = true;
    w[0].busy_until = kNow + Millis(1);
    out.clear();
    (*d)->Assign(only_x.View(), w, kNow, &out);
    for (const Assignment& a : out) EXPECT_EQ(a.worker, 0u);
    EXPECT_EQ(out.empty(), name != std::string("clkwrk"));
  }
}

// Queries of a model no active instance serves (its cpu drains) fill the head of the
// queue: they do not count against the window, so the gpu still gets the y query.
TEST(KairosMultiModelTest, QueriesNoActiveInstanceServesDoNotFillTheWindow) {
  const ProfileSuite s = DisjointSuite();
  for (const char* name : {"kairos", "drs"}) {
    SCOPED_TRACE(name);
    auto w = testing::MakeWorkers(2, s.variants().size());
    w[0].hardware = 0;
    w[1].hardware = 1;
    PolicyContext c;
    c.suite = &s;
    c.workers = w;
    c.seed = 5;
    PolicyParams p("t", {{"kairos_window", "2"}});
    auto d = name == std::string("kairos") ? KairosDispatch::Create(p) : DrsDispatch::Create(p);
    ASSERT_TRUE(d.ok());
    ASSERT_TRUE((*d)->Init(c).ok());
    w[0].active = false;
    QueueFixture q;
    for (int i = 0; i < 3; ++i) {
      q.Add(900 + i, 100);
      q.table.back().task = i < 2 ? 0 : 1;
    }
    std::vector<Assignment> out;
    (*d)->Assign(q.View(), w, kNow, &out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].position, 2u);
    EXPECT_EQ(out[0].worker, 1u);
  }
}

}  // namespace
}  // namespace sloserve

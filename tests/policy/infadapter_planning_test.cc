// InfAdapter's adapter loop as a planning policy: a solve every interval turned into
// workers (one per variant used, on the hardware with its core count, with its quota),
// create-before-delete (old workers removed only once the new ones are active), the
// stabilisation window, forecasters, and bad options.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numeric>

#include "sloserve/policy/params.h"
#include "sloserve/policy/planning/infadapter_planning.h"
#include "sloserve/policy/planning/load_forecaster.h"
#include "sloserve/profile/profile.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

const ProfileSuite& ResNetSuite() {
  return testing::EmbeddedSuite("infadapter-resnet");
}

std::unique_ptr<InfAdapterPlanning> Adapter(std::map<std::string, std::string> options,
                                            std::vector<WorkerView> workers) {
  auto p = InfAdapterPlanning::Create(PolicyParams("infadapter", options));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  PolicyContext ctx;
  ctx.suite = &ResNetSuite();
  ctx.slo = Millis(750);
  ctx.workers = std::move(workers);
  EXPECT_TRUE((*p)->Init(ctx).ok());
  return std::unique_ptr<InfAdapterPlanning>(static_cast<InfAdapterPlanning*>(p->release()));
}

WorkerView Worker(WorkerId id, HardwareId hw, VariantId pinned, WorkerPhase phase) {
  WorkerView w;
  w.id = id;
  w.hardware = hw;
  w.pinned = pinned;
  w.phase = phase;
  w.active = phase == WorkerPhase::kActive;
  return w;
}

struct Tick {
  std::vector<double> history;
  DeploymentPlan plan;
  void Run(InfAdapterPlanning& p, int64_t at_s, const std::vector<WorkerView>& workers) {
    PlanningInput in;
    in.now = kTimeZero + Seconds(at_s);
    in.observed_qps = history.empty() ? 0 : history.back();
    in.rate_history = history;
    in.workers = &workers;
    plan.Clear();
    p.Plan(in, &plan);
  }
};

// The workers a plan adds become views with ids after `workers`.
std::vector<WorkerView> WithAdded(std::vector<WorkerView> workers, const DeploymentPlan& plan,
                                  WorkerPhase phase) {
  for (const WorkerPlan& p : plan.workers) {
    if (p.worker != kNoId) continue;
    WorkerView w = Worker(static_cast<WorkerId>(workers.size()), p.hardware, p.pinned, phase);
    w.quota = p.quota;
    workers.push_back(w);
  }
  return workers;
}

// Live (serve): the solve is an offline job, not run inside Plan on the engine thread;
// the plan it publishes is rolled out at the next Plan call, the same plan as inline.
TEST(InfAdapterPlanningTest, LiveSolvesRunOffTheEngineThread) {
  std::vector<WorkerView> workers = {Worker(0, 19, kNoId, WorkerPhase::kActive)};
  const std::map<std::string, std::string> options = {
      {"forecaster", "last_value"}, {"margin", "0"}, {"stabilization_s", "0"}};
  auto created = InfAdapterPlanning::Create(PolicyParams("infadapter", options));
  ASSERT_TRUE(created.ok());
  std::vector<OfflineJob> jobs;
  PolicyContext ctx;
  ctx.suite = &ResNetSuite();
  ctx.slo = Millis(750);
  ctx.workers = workers;
  ctx.live = true;
  ctx.submit_offline = [&](OfflineJob job) { jobs.push_back(std::move(job)); };
  ASSERT_TRUE((*created)->Init(ctx).ok());
  auto& live = static_cast<InfAdapterPlanning&>(**created);
  Tick t;
  t.history.assign(60, 80.0);
  t.Run(live, 30, workers);
  EXPECT_FALSE(t.plan.change);  // submitted, not solved
  EXPECT_TRUE(live.solves().empty());
  ASSERT_EQ(jobs.size(), 1u);
  t.Run(live, 31, workers);  // still running: nothing changes, nothing more submitted
  EXPECT_FALSE(t.plan.change);
  EXPECT_EQ(jobs.size(), 1u);
  std::function<void()> publish = jobs[0].work();  // the pool's thread, in serve
  publish();                                       // the engine thread, as an event
  t.Run(live, 32, workers);
  ASSERT_TRUE(t.plan.change);
  ASSERT_EQ(live.solves().size(), 1u);
  auto inline_adapter = Adapter(options, workers);
  Tick t_inline;
  t_inline.history = t.history;
  t_inline.Run(*inline_adapter, 30, workers);
  ASSERT_EQ(inline_adapter->solves().size(), 1u);
  EXPECT_EQ(live.solves()[0].plan.objective, inline_adapter->solves()[0].plan.objective);
  EXPECT_EQ(t.plan.workers.size(), t_inline.plan.workers.size());
  // A job that finishes after its policy is gone publishes nothing (no crash).
  const std::vector<WorkerView> after = WithAdded(workers, t.plan, WorkerPhase::kActive);
  t.Run(live, 100, after);  // the new workers are active: the rollout finishes
  EXPECT_TRUE(t.plan.change);
  t.Run(live, 101, after);  // the next solve is due
  ASSERT_EQ(jobs.size(), 2u);
  created->reset();
  jobs[1].work()();
}

TEST(InfAdapterPlanningTest, SolvesThenCreatesBeforeItDeletes) {
  // Start: one unpinned worker on cpu-20c (hardware 19).
  std::vector<WorkerView> workers = {Worker(0, 19, kNoId, WorkerPhase::kActive)};
  auto p =
      Adapter({{"forecaster", "last_value"}, {"margin", "0"}, {"stabilization_s", "0"}}, workers);
  Tick t;
  t.history.assign(60, 80.0);
  t.Run(*p, 30, workers);
  ASSERT_TRUE(t.plan.change);
  ASSERT_EQ(p->solves().size(), 1u);
  const InfAdapterPlan& solved = p->solves()[0].plan;
  EXPECT_DOUBLE_EQ(p->solves()[0].forecast_rps, 80.0);
  EXPECT_NEAR(solved.served_rps, 80.0, 1e-6);
  // The MILP (the default) and `solver` dp reach the same optimum.
  auto dp = Adapter(
      {{"forecaster", "last_value"}, {"margin", "0"}, {"stabilization_s", "0"}, {"solver", "dp"}},
      workers);
  Tick t_dp;
  t_dp.history = t.history;
  t_dp.Run(*dp, 30, workers);
  ASSERT_EQ(dp->solves().size(), 1u);
  EXPECT_NEAR(dp->solves()[0].plan.objective, solved.objective, 1e-9 * std::abs(solved.objective));
  // Only additions: one per variant used, on the hardware with its cores, with its quota.
  double quotas = 0;
  int cores = 0;
  for (const WorkerPlan& w : t.plan.workers) {
    EXPECT_EQ(w.worker, kNoId);
    EXPECT_FALSE(w.remove);
    ASSERT_NE(w.pinned, kNoId);
    EXPECT_EQ(ResNetSuite().hardware()[w.hardware].cores, w.cores);
    const InfAdapterAllocation& a = solved.allocations[w.pinned];
    EXPECT_EQ(a.cores, w.cores);
    EXPECT_DOUBLE_EQ(a.quota_rps, w.quota);
    EXPECT_LE(w.quota, a.capacity_rps + 1e-9);
    quotas += w.quota;
    cores += w.cores;
  }
  EXPECT_NEAR(quotas, 80.0, 1e-6);
  EXPECT_LE(cores, 20);
  EXPECT_EQ(static_cast<int>(t.plan.workers.size()),
            std::count_if(solved.allocations.begin(), solved.allocations.end(),
                          [](const InfAdapterAllocation& a) { return a.cores > 0; }));

  // While the new workers load, the old one keeps serving: no plan.
  std::vector<WorkerView> starting = WithAdded(workers, t.plan, WorkerPhase::kStarting);
  const DeploymentPlan adds = t.plan;
  t.Run(*p, 31, starting);
  EXPECT_FALSE(t.plan.change);
  EXPECT_EQ(p->solves().size(), 1u);

  // Once all are active: the quotas switch and the old worker is removed.
  std::vector<WorkerView> ready = WithAdded(workers, adds, WorkerPhase::kActive);
  t.Run(*p, 32, ready);
  ASSERT_TRUE(t.plan.change);
  int removed = 0;
  double quota_sum = 0;
  for (const WorkerPlan& w : t.plan.workers) {
    ASSERT_NE(w.worker, kNoId);
    if (w.remove) {
      EXPECT_EQ(w.worker, 0u);
      ++removed;
    } else {
      EXPECT_GT(w.worker, 0u);
      quota_sum += w.quota;
    }
  }
  EXPECT_EQ(removed, 1);
  EXPECT_NEAR(quota_sum, 80.0, 1e-6);
}

TEST(InfAdapterPlanningTest, ScaleDownWaitsForTheStabilisationWindow) {
  std::vector<WorkerView> workers = {Worker(0, 19, kNoId, WorkerPhase::kActive)};
  auto p =
      Adapter({{"forecaster", "last_value"}, {"margin", "0"}, {"stabilization_s", "60"}}, workers);
  Tick t;
  t.history.assign(30, 120.0);
  t.Run(*p, 30, workers);
  workers = WithAdded(workers, t.plan, WorkerPhase::kActive);
  t.Run(*p, 31, workers);  // rollout done
  t.history.assign(60, 20.0);
  t.Run(*p, 60, workers);  // 30 s later the load fell, but 120 rps was seen 30 s ago
  ASSERT_EQ(p->solves().size(), 2u);
  EXPECT_DOUBLE_EQ(p->solves()[1].forecast_rps, 120.0);
  t.Run(*p, 89, workers);  // not yet the next interval (30 s after 60)
  EXPECT_EQ(p->solves().size(), 2u);
  t.Run(*p, 120, workers);  // the 120 rps forecast (at 30 s) is older than 60 s now
  ASSERT_EQ(p->solves().size(), 3u);
  EXPECT_DOUBLE_EQ(p->solves()[2].forecast_rps, 20.0);
  EXPECT_LT(p->solves()[2].plan.total_cores, p->solves()[0].plan.total_cores);
}

// MS+ runs one variant at a time; VPA+ one fixed variant with the fewest cores whose
// capacity covers the rate it provisions for.
TEST(InfAdapterPlanningTest, BaselinesMsPlusAndVpaPlus) {
  std::vector<WorkerView> workers = {Worker(0, 19, kNoId, WorkerPhase::kActive)};
  PolicyContext ctx;
  ctx.suite = &ResNetSuite();
  ctx.slo = Millis(750);
  ctx.workers = workers;
  const std::map<std::string, std::string> opts = {
      {"forecaster", "last_value"}, {"margin", "0"}, {"stabilization_s", "0"}};
  auto ms = InfAdapterPlanning::CreateMsPlus(PolicyParams("ms_plus", opts)).value();
  ASSERT_TRUE(ms->Init(ctx).ok());
  Tick t;
  t.history.assign(10, 60.0);
  t.Run(static_cast<InfAdapterPlanning&>(*ms), 30, workers);
  ASSERT_EQ(t.plan.workers.size(), 1u);  // one variant, one worker
  EXPECT_NEAR(t.plan.workers[0].quota, 60.0, 1e-6);

  auto vpa_opts = opts;
  vpa_opts["variant"] = "resnet50";
  auto vpa = InfAdapterPlanning::CreateVpaPlus(PolicyParams("vpa_plus", vpa_opts)).value();
  ASSERT_TRUE(vpa->Init(ctx).ok());
  auto model = BuildInfAdapterCapacity(ResNetSuite(), {}).value();
  const InfAdapterVariantCapacity& r50 = model.variants[2];
  ASSERT_EQ(r50.name, "resnet50");
  int fewest = 0;
  for (int k = 1; k <= 20 && fewest == 0; ++k) {
    if (r50.Feasible(k, Millis(750)) && r50.Throughput(k) >= 60.0) fewest = k;
  }
  ASSERT_GT(fewest, 0);
  t.Run(static_cast<InfAdapterPlanning&>(*vpa), 30, workers);
  ASSERT_EQ(t.plan.workers.size(), 1u);
  EXPECT_EQ(t.plan.workers[0].pinned, r50.variant);
  EXPECT_EQ(t.plan.workers[0].cores, fewest);

  // VPA+ needs its variant, and one the suite has.
  EXPECT_FALSE(InfAdapterPlanning::CreateVpaPlus(PolicyParams("vpa_plus", {})).ok());
  auto typo = InfAdapterPlanning::CreateVpaPlus(PolicyParams("vpa_plus", {{"variant", "resnet5"}}));
  ASSERT_TRUE(typo.ok());
  const Status s = (*typo)->Init(ctx);
  EXPECT_NE(s.message().find("'resnet5' is not a variant"), std::string::npos) << s.ToString();
}

TEST(InfAdapterPlanningTest, ForecastersAndTheirOptions) {
  const std::vector<double> h = {10, 40, 20, 30};
  auto last = MakeLoadForecaster({"last_value", 60, 0.1}).value();
  EXPECT_DOUBLE_EQ(last->Forecast(h), 30);
  auto max2 = MakeLoadForecaster({"moving_max", 2, 0.1}).value();
  EXPECT_DOUBLE_EQ(max2->Forecast(h), 30);
  auto max3 = MakeLoadForecaster({"moving_max", 3, 0.1}).value();
  EXPECT_DOUBLE_EQ(max3->Forecast(h), 40);
  auto ewma = MakeLoadForecaster({"ewma", 60, 0.5}).value();
  EXPECT_DOUBLE_EQ(ewma->Forecast(h), ((10 * 0.5 + 40 * 0.5) * 0.5 + 20 * 0.5) * 0.5 + 15);
  EXPECT_DOUBLE_EQ(last->Forecast({}), 0);
  auto bad = MakeLoadForecaster({"arima", 60, 0.1});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("known: ewma, last_value, lstm, moving_max"),
            std::string::npos);
  // Not registered here (this test does not link LibTorch): refused with the reason.
  auto lstm = MakeLoadForecaster({"lstm", 60, 0.1});
  ASSERT_FALSE(lstm.ok());
  EXPECT_NE(lstm.status().message().find("LibTorch"), std::string::npos)
      << lstm.status().ToString();
}

TEST(InfAdapterPlanningTest, BadOptionsAndSuitesAreNamed) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"budget_cores", "0"}, {"headroom", "1.5"},    {"interval_s", "0"}, {"margin", "-1"},
      {"min_cores", "30"},   {"forecaster", "lstm"}, {"beta", "-0.1"},    {"stabilization_s", "-5"},
      {"solver", "cbc"},     {"beta", "1.5"},        {"gamma", "2"},      {"gamma", "nan"}};
  for (const auto& [key, value] : bad) {
    auto p = InfAdapterPlanning::Create(PolicyParams("infadapter", {{key, value}}));
    ASSERT_FALSE(p.ok()) << key;
    EXPECT_NE(p.status().message().find(key == "forecaster" ? "lstm" : "'" + key + "'"),
              std::string::npos)
        << p.status().message();
  }
  // A beta written for the old percent units is refused with its meaning in the new ones.
  for (bool ms_plus : {false, true}) {
    const PolicyParams params(ms_plus ? "ms_plus" : "infadapter", {{"beta", "5"}});
    auto old =
        ms_plus ? InfAdapterPlanning::CreateMsPlus(params) : InfAdapterPlanning::Create(params);
    ASSERT_FALSE(old.ok());
    EXPECT_NE(old.status().message().find("beta / 100 now (0.050000)"), std::string::npos)
        << old.status().message();
  }
  // A suite without capacity records cannot be planned for.
  auto ramsis = LoadSuite("ramsis-image");
  ASSERT_TRUE(ramsis.ok());
  auto p = InfAdapterPlanning::Create(PolicyParams("infadapter", {})).value();
  PolicyContext ctx;
  ctx.suite = &*ramsis;
  ctx.slo = Millis(150);
  const Status s = p->Init(ctx);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("infadapter"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace sloserve

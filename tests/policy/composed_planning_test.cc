// The composed planning policy on a hand-built suite of two models on two hardware types:
// the first plan replaces the initial pool (create before delete), a load rise adds
// workers of the right model and type before any is removed, scale-down waits for the
// stabilisation window, the plan stays within the $/h budget, each model's quotas sum
// to 1, `pin: none` emits dedicated unpinned workers with load sets, `share` plain
// workers of the planned types, the fixed and static baselines, and bad options.
#include "sloserve/policy/planning/composed_planning.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "sloserve/policy/params.h"
#include "sloserve/policy/registry.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace {

// Model "img" (SLO 100 ms): img_small (70%) and img_big (80%) on cpu ($1/h) and gpu
// ($3/h); model "txt" (SLO 400 ms): txt (90%) on cpu only. Per worker at slo_fraction
// 0.5 (batch 1..8, constant latencies): img_small 333 rps on cpu (8 in 24 ms), 1455 on
// gpu (8 in 5.5 ms); img_big 100 on cpu (5 in 50 ms), 667 on gpu (8 in 12 ms); txt 30
// on cpu (6 in 200 ms).
ProfileSuite MakeSuite(double cpu_memory_gb) {
  ProfileSuite s;
  s.set_name("two-models-two-types");
  TaskSpec img;
  img.name = "img";
  img.default_slo = Millis(100);
  TaskSpec txt = img;
  txt.name = "txt";
  txt.default_slo = Millis(400);
  const TaskId i = s.AddTask(img);
  const TaskId t = s.AddTask(txt);
  const HardwareId cpu = s.AddHardware(HardwareSpec{"cpu", 1.0, 4, cpu_memory_gb});
  const HardwareId gpu = s.AddHardware(HardwareSpec{"gpu", 3.0, 8, 32});
  const VariantId small = s.AddVariant(VariantSpec{"img_small", i, 70.0, 100, Seconds(1)});
  const VariantId big = s.AddVariant(VariantSpec{"img_big", i, 80.0, 400, Seconds(2)});
  const VariantId text = s.AddVariant(VariantSpec{"txt", t, 90.0, 200, Seconds(1)});
  auto constant = [](double ms) {
    return LatencyDistribution(std::vector<int64_t>(5, static_cast<int64_t>(ms * 1000)));
  };
  for (int b = 1; b <= 8; ++b) {
    s.AddLatency(cpu, small, b, constant(10 + 2 * (b - 1)));
    s.AddLatency(cpu, big, b, constant(30 + 5 * (b - 1)));
    s.AddLatency(gpu, small, b, constant(2 + 0.5 * (b - 1)));
    s.AddLatency(gpu, big, b, constant(5 + 1 * (b - 1)));
    s.AddLatency(cpu, text, b, constant(100 + 20 * (b - 1)));
  }
  return s;
}

const ProfileSuite& TwoModelsTwoTypes() {
  static const ProfileSuite suite = MakeSuite(16);
  return suite;
}

constexpr HardwareId kCpu = 0, kGpu = 1;
constexpr TaskId kImg = 0, kTxt = 1;

std::unique_ptr<ComposedPlanning> Planner(std::map<std::string, std::string> options,
                                          const std::vector<WorkerView>& workers) {
  auto p = ComposedPlanning::Create(PolicyParams("composed", std::move(options)));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  PolicyContext ctx;
  ctx.suite = &TwoModelsTwoTypes();
  ctx.slo = Millis(100);
  ctx.workers = workers;
  const Status st = (*p)->Init(ctx);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return std::unique_ptr<ComposedPlanning>(static_cast<ComposedPlanning*>(p->release()));
}

// What the engine does with a plan, as far as a planner can see: new workers start (or
// are active at once, `start_active`), named ones take their settings, removed ones
// retire (their queues are empty here).
void Apply(const DeploymentPlan& plan, std::vector<WorkerView>& workers, bool start_active) {
  for (const WorkerPlan& p : plan.workers) {
    if (p.worker == kNoId) {
      WorkerView w;
      w.id = static_cast<WorkerId>(workers.size());
      w.hardware = p.hardware;
      w.pinned = p.pinned;
      w.model = p.pinned != kNoId ? TwoModelsTwoTypes().variants()[p.pinned].task : p.model;
      if (w.model == kAnyModel) w.model = kNoId;  // shared: dedicated to none
      w.quota = p.quota;
      w.phase = start_active ? WorkerPhase::kActive : WorkerPhase::kStarting;
      w.active = start_active;
      w.residency.assign(TwoModelsTwoTypes().variants().size(), Residency::kAbsent);
      for (VariantId v : p.load) w.residency[v] = Residency::kReady;
      if (p.pinned != kNoId) w.residency[p.pinned] = Residency::kReady;
      workers.push_back(w);
      continue;
    }
    WorkerView& w = workers[p.worker];
    if (p.remove) {
      w.phase = WorkerPhase::kRetired;
      w.active = false;
      continue;
    }
    w.pinned = p.pinned;
    if (p.model != kNoId) w.model = p.model == kAnyModel ? kNoId : p.model;
    w.quota = p.quota;
  }
}

void Activate(std::vector<WorkerView>& workers) {
  for (WorkerView& w : workers) {
    if (w.phase != WorkerPhase::kStarting) continue;
    w.phase = WorkerPhase::kActive;
    w.active = true;
  }
}

// One plan tick with per-model rates: `img_rps` and `txt_rps` for the last `seconds`.
DeploymentPlan Tick(ComposedPlanning& p, int64_t at_s, double img_rps, double txt_rps,
                    const std::vector<WorkerView>& workers, int seconds = 60) {
  const std::vector<std::vector<double>> history = {std::vector<double>(seconds, img_rps),
                                                    std::vector<double>(seconds, txt_rps)};
  const std::vector<double> qps = {img_rps, txt_rps};
  PlanningInput in;
  in.now = kTimeZero + Seconds(at_s);
  in.observed_qps = img_rps + txt_rps;
  in.model_qps = qps;
  in.model_rate_history = history;
  in.workers = &workers;
  DeploymentPlan plan;
  p.Plan(in, &plan);
  return plan;
}

std::vector<WorkerView> InitialPool() {
  std::vector<WorkerView> workers(2);
  for (WorkerId i = 0; i < 2; ++i) {
    workers[i].id = i;
    workers[i].hardware = i == 0 ? kCpu : kGpu;
    workers[i].residency.assign(TwoModelsTwoTypes().variants().size(), Residency::kAbsent);
  }
  return workers;
}

int Added(const DeploymentPlan& plan) {
  int n = 0;
  for (const WorkerPlan& p : plan.workers) n += p.worker == kNoId;
  return n;
}

int Removed(const DeploymentPlan& plan) {
  int n = 0;
  for (const WorkerPlan& p : plan.workers) n += p.remove;
  return n;
}

// The workers that serve (active, not retired), their cost and per-model quota sums.
struct Pool {
  double cost = 0;
  std::map<TaskId, double> quota;
  std::map<TaskId, int> workers;
};
Pool Serving(const std::vector<WorkerView>& workers) {
  Pool pool;
  for (const WorkerView& w : workers) {
    if (w.phase != WorkerPhase::kActive) continue;
    pool.cost += TwoModelsTwoTypes().hardware()[w.hardware].price_per_hour;
    pool.quota[w.model] += w.quota;
    ++pool.workers[w.model];
  }
  return pool;
}

const std::map<std::string, std::string> kBase = {{"budget_usd_per_h", "10"},
                                                  {"forecaster", "last_value"},
                                                  {"margin", "0"},
                                                  {"stabilization_s", "0"}};

TEST(ComposedPlanningTest, FirstPlanReplacesTheInitialPool) {
  std::vector<WorkerView> workers = InitialPool();
  auto p = Planner(kBase, workers);
  DeploymentPlan plan = Tick(*p, 0, 200, 20, workers);
  ASSERT_TRUE(plan.change);
  ASSERT_EQ(p->solves().size(), 1u);
  EXPECT_GT(Added(plan), 0);
  EXPECT_EQ(Removed(plan), 0);  // create before delete
  for (const WorkerPlan& w : plan.workers) {
    ASSERT_EQ(w.worker, kNoId);
    ASSERT_NE(w.pinned, kNoId);
    EXPECT_EQ(w.model, TwoModelsTwoTypes().variants()[w.pinned].task);
    if (w.model == kTxt) {
      EXPECT_EQ(w.hardware, kCpu);  // txt runs on cpu only
    }
  }
  Apply(plan, workers, /*start_active=*/false);
  plan = Tick(*p, 1, 200, 20, workers);  // still starting: nothing moves
  EXPECT_FALSE(plan.change);
  Activate(workers);
  plan = Tick(*p, 2, 200, 20, workers);
  ASSERT_TRUE(plan.change);
  EXPECT_EQ(Removed(plan), 2);  // the initial pool goes
  Apply(plan, workers, false);
  EXPECT_EQ(workers[0].phase, WorkerPhase::kRetired);
  EXPECT_EQ(workers[1].phase, WorkerPhase::kRetired);
  const Pool pool = Serving(workers);
  EXPECT_LE(pool.cost, 10);
  EXPECT_NEAR(pool.quota.at(kImg), 1, 1e-9);
  EXPECT_NEAR(pool.quota.at(kTxt), 1, 1e-9);
  // txt needs 20 / (0.8 x 30) -> one worker.
  EXPECT_EQ(pool.workers.at(kTxt), 1);
  EXPECT_NEAR(p->solves()[0].forecast_rps[kImg], 200, 1e-9);
  EXPECT_NEAR(p->solves()[0].forecast_rps[kTxt], 20, 1e-9);
  EXPECT_NEAR(p->solves()[0].plan.cost_usd_per_h, pool.cost, 1e-9);
}

TEST(ComposedPlanningTest, ScaleUpAddsBeforeItRemoves) {
  std::vector<WorkerView> workers = InitialPool();
  auto p = Planner(kBase, workers);
  Apply(Tick(*p, 0, 100, 10, workers), workers, true);
  Apply(Tick(*p, 1, 100, 10, workers), workers, true);  // rollout done
  const Pool before = Serving(workers);
  EXPECT_EQ(before.workers.at(kTxt), 1);
  // txt triples: 60 rps needs ceil(60 / 24) = 3 txt workers on cpu.
  DeploymentPlan plan = Tick(*p, 30, 100, 60, workers);
  ASSERT_TRUE(plan.change);
  EXPECT_EQ(Removed(plan), 0);
  int txt_added = 0;
  for (const WorkerPlan& w : plan.workers) {
    if (w.worker != kNoId || w.model != kTxt) continue;
    ++txt_added;
    EXPECT_EQ(w.hardware, kCpu);
    EXPECT_EQ(w.pinned, TwoModelsTwoTypes().FindVariant("txt").value());
  }
  EXPECT_EQ(txt_added, 2);  // the one it has is kept
  Apply(plan, workers, false);
  Activate(workers);
  plan = Tick(*p, 31, 100, 60, workers);
  Apply(plan, workers, false);
  const Pool after = Serving(workers);
  EXPECT_EQ(after.workers.at(kTxt), 3);
  EXPECT_NEAR(after.quota.at(kTxt), 1, 1e-9);
  EXPECT_LE(after.cost, 10);
}

TEST(ComposedPlanningTest, ScaleDownWaitsForTheStabilisationWindow) {
  std::map<std::string, std::string> options = kBase;
  options["stabilization_s"] = "60";
  std::vector<WorkerView> workers = InitialPool();
  auto p = Planner(options, workers);
  Apply(Tick(*p, 0, 100, 60, workers), workers, true);
  Apply(Tick(*p, 1, 100, 60, workers), workers, true);
  Tick(*p, 30, 100, 10, workers);  // 30 s later: the 60 rps forecast is in the window
  ASSERT_EQ(p->solves().size(), 2u);
  EXPECT_NEAR(p->solves()[1].forecast_rps[kTxt], 60, 1e-9);
  Tick(*p, 61, 100, 10, workers);  // the high forecast (t = 0) has left the window
  ASSERT_EQ(p->solves().size(), 3u);
  EXPECT_NEAR(p->solves()[2].forecast_rps[kTxt], 10, 1e-9);
}

TEST(ComposedPlanningTest, PlansStayWithinTheBudgetEvenWhenOverloaded) {
  std::vector<WorkerView> workers = InitialPool();
  auto p = Planner(kBase, workers);
  int t = 0;
  for (double txt : {10.0, 200.0, 5.0, 1000.0}) {
    Apply(Tick(*p, t, 3000, txt, workers), workers, true);
    Apply(Tick(*p, t + 1, 3000, txt, workers), workers, true);
    t += 30;
    const Pool pool = Serving(workers);
    EXPECT_LE(pool.cost, 10 + 1e-9) << "txt " << txt;
    EXPECT_NEAR(pool.quota.at(kImg), 1, 1e-9);
    EXPECT_NEAR(pool.quota.at(kTxt), 1, 1e-9);
    EXPECT_GE(pool.workers.at(kImg), 1);
    EXPECT_GE(pool.workers.at(kTxt), 1);
  }
  ASSERT_EQ(p->solves().size(), 4u);
  EXPECT_TRUE(p->solves()[3].plan.overloaded);  // 1000 txt rps do not fit $10/h
  for (const ComposedPlanning::Solve& s : p->solves()) EXPECT_LE(s.plan.cost_usd_per_h, 10);
}

TEST(ComposedPlanningTest, PinNoneDedicatesWorkersWithTheirLoadSets) {
  std::map<std::string, std::string> options = kBase;
  options["pin"] = "none";
  options["beta"] = "0";  // cost no object: both img variants are worth running
  std::vector<WorkerView> workers = InitialPool();
  auto p = Planner(options, workers);
  const DeploymentPlan plan = Tick(*p, 0, 800, 20, workers);
  ASSERT_GT(Added(plan), 0);
  for (const WorkerPlan& w : plan.workers) {
    EXPECT_EQ(w.pinned, kNoId);
    ASSERT_NE(w.model, kNoId);
    ASSERT_FALSE(w.load.empty());
    for (VariantId v : w.load) {
      EXPECT_EQ(TwoModelsTwoTypes().variants()[v].task, w.model);
      EXPECT_GT(TwoModelsTwoTypes().MaxBatch(w.hardware, v), 0);
    }
  }
  // A worker loads what the solve planned for the model before it serves, and prefetches
  // every other variant its type profiles once it serves (memory is not a limit here).
  const ComposedPlanning::Solve& s = p->solves()[0];
  std::set<VariantId> planned;
  for (size_t i = 0; i < s.candidates.size(); ++i) {
    if (s.plan.allocations[i].workers > 0 && s.candidates[i].model == kImg) {
      planned.insert(s.candidates[i].variant);
    }
  }
  ASSERT_FALSE(planned.empty());
  for (const WorkerPlan& w : plan.workers) {
    if (w.model != kImg) continue;
    std::set<VariantId> profiled, planned_here, held(w.load.begin(), w.load.end());
    for (VariantId v : TwoModelsTwoTypes().VariantsOfTask(kImg)) {
      if (TwoModelsTwoTypes().MaxBatch(w.hardware, v) > 0) profiled.insert(v);
      if (planned.count(v) && profiled.count(v)) planned_here.insert(v);
    }
    EXPECT_EQ(held, planned_here);
    for (VariantId v : w.prefetch) {
      EXPECT_FALSE(planned.count(v)) << v;
      held.insert(v);
    }
    EXPECT_EQ(held, profiled);
  }
  // Kept as they are at the next solve (matched by model and type).
  Apply(plan, workers, true);
  Apply(Tick(*p, 1, 800, 20, workers), workers, true);
  const DeploymentPlan again = Tick(*p, 30, 800, 20, workers);
  EXPECT_EQ(Added(again), 0);
  EXPECT_EQ(Removed(again), 0);
}

// With unpinned_load: planned a worker holds exactly the planned variants of its model.
TEST(ComposedPlanningTest, UnpinnedLoadPlannedHoldsOnlyThePlannedVariants) {
  std::map<std::string, std::string> options = kBase;
  options["pin"] = "none";
  options["unpinned_load"] = "planned";
  std::vector<WorkerView> workers = InitialPool();
  auto p = Planner(options, workers);
  const DeploymentPlan plan = Tick(*p, 0, 200, 20, workers);
  const ComposedPlanning::Solve& s = p->solves()[0];
  std::map<TaskId, std::set<VariantId>> planned;
  for (size_t i = 0; i < s.candidates.size(); ++i) {
    if (s.plan.allocations[i].workers > 0) {
      planned[s.candidates[i].model].insert(s.candidates[i].variant);
    }
  }
  ASSERT_GT(Added(plan), 0);
  bool fewer_than_profiled = false;  // else the case could not tell the two choices apart
  for (const WorkerPlan& w : plan.workers) {
    std::set<VariantId> held(w.load.begin(), w.load.end());
    EXPECT_EQ(held.size(), w.load.size());
    for (VariantId v : held) EXPECT_TRUE(planned[w.model].count(v)) << v;
    size_t profiled = 0;
    for (VariantId v : TwoModelsTwoTypes().VariantsOfTask(w.model)) {
      if (TwoModelsTwoTypes().MaxBatch(w.hardware, v) > 0) ++profiled;
    }
    if (held.size() < profiled) fewer_than_profiled = true;
  }
  EXPECT_TRUE(fewer_than_profiled);
}

TEST(ComposedPlanningTest, UnpinnedLoadRejectsAnUnknownChoice) {
  EXPECT_FALSE(ComposedPlanning::Create(PolicyParams("composed", {{"budget_usd_per_h", "10"},
                                                                  {"unpinned_load", "everything"}}))
                   .ok());
}

// An unpinned worker loads the planned variants its machine holds, those with the most
// quota on its type first, then the others that still fit.
TEST(ComposedPlanningTest, LoadSetsFitTheMachine) {
  const ProfileSuite small_cpu = MakeSuite(0.45);  // 460.8 MB: img_small or img_big
  auto created = ComposedPlanning::Create(PolicyParams("composed", {{"budget_usd_per_h", "10"},
                                                                    {"pin", "none"},
                                                                    {"beta", "0"},
                                                                    {"max_workers", "gpu=1"},
                                                                    {"forecaster", "last_value"},
                                                                    {"margin", "0"}}));
  ASSERT_TRUE(created.ok());
  PolicyContext ctx;
  ctx.suite = &small_cpu;
  ASSERT_TRUE((*created)->Init(ctx).ok());
  auto& p = static_cast<ComposedPlanning&>(**created);
  const std::vector<WorkerView> workers = InitialPool();
  const DeploymentPlan plan = Tick(p, 0, 2000, 20, workers);
  // One gpu worker runs img_big (and holds img_small); the rest of img is img_small on
  // cpu, whose 460.8 MB take img_small (100 MB, all of the quota there) but not img_big
  // too (400 MB more).
  const VariantId small = small_cpu.FindVariant("img_small").value();
  const VariantId big = small_cpu.FindVariant("img_big").value();
  int cpu_img = 0, gpu_img = 0;
  for (const WorkerPlan& w : plan.workers) {
    if (w.model != kImg) continue;
    if (w.hardware == kCpu) {
      ++cpu_img;
      EXPECT_EQ(w.load, std::vector<VariantId>{small});
    } else {
      ++gpu_img;
      EXPECT_EQ(w.load, (std::vector<VariantId>{big, small}));
    }
  }
  EXPECT_GT(cpu_img, 0);
  EXPECT_EQ(gpu_img, 1);
}

TEST(ComposedPlanningTest, PinAListLeavesOnlyThoseModelsUnpinned) {
  std::map<std::string, std::string> options = kBase;
  options["pin"] = "txt";
  std::vector<WorkerView> workers = InitialPool();
  auto p = Planner(options, workers);
  for (const WorkerPlan& w : Tick(*p, 0, 200, 20, workers).workers) {
    EXPECT_EQ(w.pinned == kNoId, w.model == kTxt);
  }
}

// `share`: the planned workers are plain machines of the planned types (no pin, no
// model, nothing loaded), as many per type as the solve planned over the shared models;
// the initial pool (also undedicated and unpinned) is replaced all the same, and the
// shared workers are kept at the next solve.
TEST(ComposedPlanningTest, ShareEmitsPlainWorkersPerPlannedType) {
  for (const char* share : {"all", "img, txt"}) {
    std::map<std::string, std::string> options = kBase;
    options["share"] = share;
    options["pin"] = "txt";  // share overrides pin
    std::vector<WorkerView> workers = InitialPool();
    auto p = Planner(options, workers);
    const DeploymentPlan plan = Tick(*p, 0, 800, 20, workers);
    ASSERT_EQ(p->solves().size(), 1u);
    const ComposedPlanning::Solve& s = p->solves()[0];
    std::map<HardwareId, int> planned, added;
    for (size_t i = 0; i < s.candidates.size(); ++i) {
      planned[s.candidates[i].hardware] += s.plan.allocations[i].workers;
    }
    for (const WorkerPlan& w : plan.workers) {
      ASSERT_EQ(w.worker, kNoId) << share;
      EXPECT_EQ(w.pinned, kNoId);
      EXPECT_EQ(w.model, kAnyModel);
      EXPECT_TRUE(w.load.empty());
      EXPECT_EQ(w.quota, 0);
      ++added[w.hardware];
    }
    for (auto it = planned.begin(); it != planned.end();) {
      it = it->second == 0 ? planned.erase(it) : std::next(it);
    }
    EXPECT_EQ(added, planned) << share;
    Apply(plan, workers, /*start_active=*/true);
    const DeploymentPlan finish = Tick(*p, 1, 800, 20, workers);
    EXPECT_EQ(Removed(finish), 2) << share;  // both initial workers, though they would match
    for (const WorkerPlan& w : finish.workers) {
      if (w.remove) {
        EXPECT_LT(w.worker, 2u);
      }
    }
    Apply(finish, workers, true);
    const DeploymentPlan again = Tick(*p, 30, 800, 20, workers);
    EXPECT_EQ(Added(again), 0) << share;
    EXPECT_EQ(Removed(again), 0) << share;
  }
}

// Only the listed models are shared; the others keep dedicated, pinned workers.
TEST(ComposedPlanningTest, ShareAListLeavesTheOtherModelsDedicated) {
  std::map<std::string, std::string> options = kBase;
  options["share"] = "txt";
  std::vector<WorkerView> workers = InitialPool();
  auto p = Planner(options, workers);
  int shared = 0, img = 0;
  for (const WorkerPlan& w : Tick(*p, 0, 200, 20, workers).workers) {
    if (w.model == kAnyModel) {
      ++shared;
      EXPECT_EQ(w.hardware, kCpu);  // txt runs on cpu only
    } else {
      ++img;
      ASSERT_NE(w.pinned, kNoId);
      EXPECT_EQ(w.model, kImg);
    }
  }
  EXPECT_GT(shared, 0);
  EXPECT_GT(img, 0);
}

// With fixed variants an unpinned model's workers load the fixed variant and prefetch every
// other variant of the model its type profiles (the most accurate first): the fixed variant
// only sizes the plan, and the selection chooses among what the workers hold.
TEST(ComposedPlanningTest, FixedVariantsUnpinnedLoadEveryVariant) {
  std::map<std::string, std::string> options = kBase;
  options["sizing"] = "static";
  options["fixed_variants"] = "img=img_small";
  options["fixed_hardware"] = "img=cpu";
  options["pin"] = "img";
  std::vector<WorkerView> workers = InitialPool();
  auto p = Planner(options, workers);
  const VariantId small = TwoModelsTwoTypes().FindVariant("img_small").value();
  const VariantId big = TwoModelsTwoTypes().FindVariant("img_big").value();
  int img = 0;
  for (const WorkerPlan& w : Tick(*p, 0, 200, 20, workers).workers) {
    if (w.model != kImg) continue;
    ++img;
    EXPECT_EQ(w.pinned, kNoId);
    EXPECT_EQ(w.load, std::vector<VariantId>{small});
    EXPECT_EQ(w.prefetch, std::vector<VariantId>{big});
  }
  EXPECT_GT(img, 0);
}

TEST(ComposedPlanningTest, FixedVariantsAndHardware) {
  std::map<std::string, std::string> options = kBase;
  options["variant_mode"] = "fixed";
  options["fixed_variants"] = " img = img_small ,";  // spaces and empty items are fine
  options["hardware_mode"] = "fixed";
  options["fixed_hardware"] = "img=cpu";
  std::vector<WorkerView> workers = InitialPool();
  auto p = Planner(options, workers);
  const VariantId small = TwoModelsTwoTypes().FindVariant("img_small").value();
  for (const WorkerPlan& w : Tick(*p, 0, 500, 20, workers).workers) {
    if (w.model != kImg) continue;
    EXPECT_EQ(w.pinned, small);
    EXPECT_EQ(w.hardware, kCpu);
  }
  // The defaults: the most accurate variant (img_big), on the type with the most
  // capacity per $ for it (gpu: 667 / 3 > 100 / 1).
  auto d = Planner(
      {{"budget_usd_per_h", "10"}, {"variant_mode", "fixed"}, {"hardware_mode", "fixed"}}, workers);
  ASSERT_EQ(d->problem().candidates.size(), 2u);
  EXPECT_EQ(d->problem().candidates[0].name, "img_big@gpu");
  EXPECT_EQ(d->problem().candidates[1].name, "txt@cpu");
}

TEST(ComposedPlanningTest, StaticSizingIsDecidedOnce) {
  std::map<std::string, std::string> options = kBase;
  options["sizing"] = "static";
  std::vector<WorkerView> workers = InitialPool();
  auto p = Planner(options, workers);
  const DeploymentPlan plan = Tick(*p, 0, 100, 10, workers);
  // $5/h per model: one $3/h gpu worker of img_big, five $1/h cpu workers of txt.
  int img = 0, txt = 0;
  for (const WorkerPlan& w : plan.workers) {
    img += w.model == kImg;
    txt += w.model == kTxt;
  }
  EXPECT_EQ(img, 1);
  EXPECT_EQ(txt, 5);
  Apply(plan, workers, true);
  Apply(Tick(*p, 1, 100, 10, workers), workers, true);
  EXPECT_FALSE(Tick(*p, 30, 2000, 100, workers).change);  // never re-decided
  EXPECT_EQ(p->solves().size(), 1u);
}

// Live (serve): the solve is an offline job; its plan is rolled out at the first Plan
// call after it is published, the same plan as inline.
TEST(ComposedPlanningTest, LiveSolvesRunOffTheEngineThread) {
  std::vector<WorkerView> workers = InitialPool();
  auto created = ComposedPlanning::Create(PolicyParams("composed", kBase));
  ASSERT_TRUE(created.ok());
  std::vector<OfflineJob> jobs;
  PolicyContext ctx;
  ctx.suite = &TwoModelsTwoTypes();
  ctx.live = true;
  ctx.submit_offline = [&](OfflineJob job) { jobs.push_back(std::move(job)); };
  ASSERT_TRUE((*created)->Init(ctx).ok());
  auto& live = static_cast<ComposedPlanning&>(**created);
  EXPECT_FALSE(Tick(live, 0, 200, 20, workers).change);  // submitted, not solved
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_FALSE(Tick(live, 1, 200, 20, workers).change);  // still running
  EXPECT_EQ(jobs.size(), 1u);
  jobs[0].work()();  // the pool's thread, then the publish step on the engine thread
  const DeploymentPlan plan = Tick(live, 2, 200, 20, workers);
  ASSERT_TRUE(plan.change);
  ASSERT_EQ(live.solves().size(), 1u);
  auto inline_planner = Planner(kBase, workers);
  const DeploymentPlan inline_plan = Tick(*inline_planner, 0, 200, 20, workers);
  EXPECT_EQ(live.solves()[0].plan.objective, inline_planner->solves()[0].plan.objective);
  EXPECT_EQ(Added(plan), Added(inline_plan));
  // A job that finishes after its policy is gone publishes nothing.
  Apply(plan, workers, true);
  Tick(live, 3, 200, 20, workers);   // the rollout finishes
  Tick(live, 40, 200, 20, workers);  // the next solve is submitted
  ASSERT_EQ(jobs.size(), 2u);
  created->reset();
  jobs[1].work()();
}

// The oracle plans each model for the peak of its own arrivals in the next interval.
TEST(ComposedPlanningTest, OracleForecastsTheNextIntervalsPeak) {
  std::map<std::string, std::string> options = kBase;
  options["forecaster"] = "oracle";
  auto created = ComposedPlanning::Create(PolicyParams("composed", options));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  PolicyContext ctx;
  ctx.suite = &TwoModelsTwoTypes();
  EXPECT_FALSE((*created)->Init(ctx).ok());  // serve: no future to know
  std::vector<std::pair<TimePoint, TimePoint>> asked;
  ctx.future_peak_qps = [&](TaskId t, TimePoint from, TimePoint to) {
    asked.emplace_back(from, to);
    return t == kImg ? 300.0 : 7.0;
  };
  ASSERT_TRUE((*created)->Init(ctx).ok());
  auto& p = static_cast<ComposedPlanning&>(**created);
  const std::vector<WorkerView> workers = InitialPool();
  Tick(p, 10, 100, 1, workers);  // the observed rates do not matter
  ASSERT_EQ(p.solves().size(), 1u);
  EXPECT_DOUBLE_EQ(p.solves()[0].forecast_rps[kImg], 300);
  EXPECT_DOUBLE_EQ(p.solves()[0].forecast_rps[kTxt], 7);
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0].first, kTimeZero + Seconds(10));
  EXPECT_EQ(asked[0].second, kTimeZero + Seconds(40));  // interval_s 30
}

TEST(ComposedPlanningTest, RefusesBadOptions) {
  auto create = [](std::map<std::string, std::string> o) {
    return ComposedPlanning::Create(PolicyParams("composed", std::move(o))).status();
  };
  EXPECT_FALSE(create({}).ok());  // budget_usd_per_h is required
  EXPECT_FALSE(create({{"budget_usd_per_h", "0"}}).ok());
  EXPECT_FALSE(create({{"budget_usd_per_h", "10"}, {"headroom", "1.5"}}).ok());
  EXPECT_FALSE(create({{"budget_usd_per_h", "10"}, {"slo_fraction", "0"}}).ok());
  EXPECT_FALSE(create({{"budget_usd_per_h", "10"}, {"variant_mode", "some"}}).ok());
  EXPECT_FALSE(create({{"budget_usd_per_h", "10"}, {"max_workers", "cpu"}}).ok());
  EXPECT_FALSE(create({{"budget_usd_per_h", "10"}, {"max_workers", "cpu= "}}).ok());
  EXPECT_FALSE(create({{"budget_usd_per_h", "10"}, {"max_workers", "cpu=-1"}}).ok());
  EXPECT_FALSE(create({{"budget_usd_per_h", "10"}, {"forecaster", "psychic"}}).ok());
  EXPECT_FALSE(create({{"budget_usd_per_h", "10"}, {"pin", ","}}).ok());
  EXPECT_FALSE(create({{"budget_usd_per_h", "10"}, {"share", " , "}}).ok());
  // Dependent options, refused without what they depend on.
  EXPECT_FALSE(create({{"budget_usd_per_h", "10"}, {"fixed_variants", "img=img_small"}}).ok());
  EXPECT_FALSE(create({{"budget_usd_per_h", "10"}, {"fixed_hardware", "img=cpu"}}).ok());
  EXPECT_TRUE(create({{"budget_usd_per_h", "10"},
                      {"sizing", "static"},
                      {"fixed_variants", "img=img_small"},
                      {"fixed_hardware", "img=cpu"}})
                  .ok());
  // Names are checked against the suite at Init.
  for (const auto& [key, value] :
       std::map<std::string, std::string>{{"fixed_variants", "nope=img_small"},
                                          {"max_workers", "tpu=2"},
                                          {"fixed_hardware", "img=tpu"},
                                          {"pin", "nope"},
                                          {"share", "img,nope"}}) {
    auto p = ComposedPlanning::Create(
        PolicyParams("composed", {{"budget_usd_per_h", "10"}, {"sizing", "static"}, {key, value}}));
    ASSERT_TRUE(p.ok()) << key;
    PolicyContext ctx;
    ctx.suite = &TwoModelsTwoTypes();
    EXPECT_FALSE((*p)->Init(ctx).ok()) << key;
  }
  // A fixed variant the fixed type cannot run within the SLO.
  auto p = ComposedPlanning::Create(PolicyParams("composed", {{"budget_usd_per_h", "10"},
                                                              {"variant_mode", "fixed"},
                                                              {"hardware_mode", "fixed"},
                                                              {"fixed_hardware", "txt=gpu"}}));
  ASSERT_TRUE(p.ok());
  PolicyContext ctx;
  ctx.suite = &TwoModelsTwoTypes();
  EXPECT_FALSE((*p)->Init(ctx).ok());
}

TEST(ComposedPlanningTest, RegisteredWithItsOptions) {
  const PolicyRegistry& reg = PolicyRegistry::Builtin();
  EXPECT_EQ(reg.KindOf("composed"), "planning");
  std::set<std::string> names;
  for (const KeyDecl& k : reg.OptionsOf("composed")) names.insert(k.name);
  for (const char* key :
       {"budget_usd_per_h", "interval_s", "slo_fraction", "headroom", "margin", "beta", "gamma",
        "forecaster", "stabilization_s", "rollout_timeout_s", "max_workers", "variant_mode",
        "fixed_variants", "hardware_mode", "fixed_hardware", "sizing", "pin", "share"}) {
    EXPECT_TRUE(names.count(key)) << key;
  }
}

}  // namespace
}  // namespace sloserve

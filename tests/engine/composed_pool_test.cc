// A multi-model pool of mixed hardware with dedicated workers (docs/composed.md, issue 32):
// every dispatcher sends a query only to workers serving its model, a plan dedicates a
// worker to one model, and the planner sees each model's arrival rate.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sloserve/engine/engine.h"
#include "support/engine_fixtures.h"
#include "support/multi_model_suite.h"
#include "support/puppet_executor.h"
#include "support/test_policies.h"
#include "support/virtual_run.h"

namespace sloserve {
namespace {

using testing::PuppetExecutor;

// Two models profiled on disjoint hardware: "x" (x1, x2) on cpu only, "y" (y1, y2) on gpu
// only; batches of 1..4 rows, constant latencies.
struct Disjoint {
  ProfileSuite suite;
  TaskId x = 0, y = 0;
  HardwareId cpu = 0, gpu = 0;
};

Disjoint DisjointSuite() {
  Disjoint d;
  ProfileSuite& s = d.suite;
  s.set_name("disjoint");
  d.x = s.AddTask(TaskSpec{"x", Seconds(1)});
  d.y = s.AddTask(TaskSpec{"y", Seconds(1)});
  d.cpu = s.AddHardware(HardwareSpec{"cpu", 1.0, 4, 0});
  d.gpu = s.AddHardware(HardwareSpec{"gpu", 3.0, 8, 0});
  const VariantId x1 = s.AddVariant(VariantSpec{"x1", d.x, 70, 100, Millis(10)});
  const VariantId x2 = s.AddVariant(VariantSpec{"x2", d.x, 80, 100, Millis(10)});
  const VariantId y1 = s.AddVariant(VariantSpec{"y1", d.y, 60, 100, Millis(10)});
  const VariantId y2 = s.AddVariant(VariantSpec{"y2", d.y, 75, 100, Millis(10)});
  auto lat = [](int64_t us) { return LatencyDistribution(std::vector<int64_t>(3, us)); };
  for (int k = 1; k <= 4; ++k) {
    s.AddLatency(d.cpu, x1, k, lat(1000 + 300 * k));
    s.AddLatency(d.cpu, x2, k, lat(1500 + 400 * k));
    s.AddLatency(d.gpu, y1, k, lat(800 + 200 * k));
    s.AddLatency(d.gpu, y2, k, lat(1200 + 300 * k));
  }
  return d;
}

std::vector<WorkerSpec> Pool(const std::vector<HardwareId>& types) {
  std::vector<WorkerSpec> w;
  for (size_t i = 0; i < types.size(); ++i) {
    WorkerSpec s;
    s.name = "w" + std::to_string(i);
    s.hardware = types[i];
    w.push_back(s);
  }
  return w;
}

Query Of(TaskId task, TimePoint now, Duration slo) {
  Query q;
  q.task = task;
  q.deadline = now + slo;
  return q;
}

// Admission per model on workers that serve only their model: the wait is the model's own
// queue on its own workers, so a burst of x (cpu) that fills x's queue sheds x's excess and
// none of y's queries (gpu). Before, the pool's queued rows counted for every model, and
// every active worker's capacity.
TEST(ComposedPoolTest, AdmissionOfAModelOnItsOwnWorkersIgnoresTheOthersQueues) {
  Disjoint d = DisjointSuite();
  testing::VirtualRun run;
  EngineOptions opts;
  opts.admission.enabled = true;
  opts.slo = Millis(100);  // x's, the engine's task
  opts.model_slo = {Millis(100), Millis(50)};
  ASSERT_TRUE(
      run.Start(&d.suite, Pool({d.cpu, d.gpu}), testing::Policies("jsq", "edf"), nullptr, opts)
          .ok());
  Engine& e = run.engine();
  testing::RecordLog log;
  e.set_sink(log.Sink());
  // x's cpu worker clears ~1,700 rows/s (4 rows in 2.3 ms): ~130 rows fit 75 ms of x's SLO.
  for (int i = 0; i < 400; ++i) run.Submit(Of(d.x, kTimeZero, Millis(100)), kTimeZero);
  ASSERT_GT(e.queued_rows(), 100);
  // y's gpu worker clears ~2,500 rows/s: x's queue would take y past 75% of its 50 ms.
  for (int i = 0; i < 5; ++i) run.Submit(Of(d.y, kTimeZero, Millis(50)), kTimeZero);
  run.RunToEnd();
  e.DropAllQueued(run.now());
  ASSERT_TRUE(log.EachEndedOnce(405));
  int x_shed = 0, y_done = 0;
  for (const QueryRecord& r : log.records) {
    x_shed += r.task == d.x && r.drop_reason == DropReason::kShed;
    if (r.task == d.y) {
      EXPECT_FALSE(r.dropped) << DropReasonName(r.drop_reason);
      y_done += !r.dropped;
    }
  }
  EXPECT_GT(x_shed, 0);
  EXPECT_EQ(y_done, 5);
}

TEST(ComposedPoolTest, EveryDispatcherServesEachModelOnlyWhereItsHardwareServesIt) {
  const Disjoint d = DisjointSuite();
  const std::map<std::string, std::map<std::string, std::string>> dispatchers = {
      {"round_robin", {}}, {"jsq", {}},
      {"quota", {}},       {"central", {}},
      {"shared", {}},      {"kairos", {}},
      {"ribbon", {}},      {"drs", {}},
      {"clkwrk", {}},      {"slo_partition", {{"slo_workers", "1000:4"}}}};
  for (const auto& [dispatch, options] : dispatchers) {
    SCOPED_TRACE(dispatch);
    testing::VirtualRun run;
    ASSERT_TRUE(run.Start(&d.suite, Pool({d.cpu, d.gpu, d.cpu, d.gpu}),
                          testing::Policies(dispatch, "edf", options))
                    .ok());
    Engine& e = run.engine();
    testing::RecordLog log;
    e.set_sink(log.Sink());
    std::mt19937 rng(7);
    TimePoint now = kTimeZero;
    const int n = 2000;
    for (int i = 0; i < n; ++i) {
      now += Micros(static_cast<int64_t>(rng() % 4000));
      run.Submit(Of(rng() % 2 == 0 ? d.x : d.y, now, Seconds(1)), now);
    }
    run.RunToEnd();
    e.DropAllQueued(run.now());
    ASSERT_TRUE(log.EachEndedOnce(n));
    EXPECT_EQ(log.Count(DropReason::kInternal), 0);
    EXPECT_EQ(log.Count(DropReason::kUnservable), 0);
    EXPECT_EQ(log.Count(DropReason::kShutdown), 0);
    EXPECT_EQ(e.counters().invalid_decisions, 0);
    int64_t completed = 0;
    for (const QueryRecord& r : log.records) {
      if (r.dropped) continue;
      ++completed;
      EXPECT_EQ(e.workers()[r.worker].hardware, r.task == d.x ? d.cpu : d.gpu) << r.id;
    }
    EXPECT_EQ(completed, n);
  }
}

TEST(ComposedPoolTest, EveryPlacementPicksOnlyWorkersServingTheQueriesModel) {
  const Disjoint d = DisjointSuite();
  for (const char* placement : {"random", "model_aware", "colocation", "colocation_queue",
                                "registry", "adaptive", "prefetch", "multiplexed"}) {
    SCOPED_TRACE(placement);
    PolicySpec spec;
    spec.dispatch = "jsq";
    spec.batching = "edf";
    spec.placement = placement;
    auto set = MakePolicySet(spec);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    testing::VirtualRun run;
    ASSERT_TRUE(
        run.Start(&d.suite, Pool({d.gpu, d.cpu, d.gpu, d.cpu}), std::move(set).value()).ok());
    Engine& e = run.engine();
    testing::RecordLog log;
    e.set_sink(log.Sink());
    std::mt19937 rng(3);
    TimePoint now = kTimeZero;
    const int n = 1000;
    for (int i = 0; i < n; ++i) {
      now += Micros(static_cast<int64_t>(rng() % 4000));
      run.Submit(Of(rng() % 2 == 0 ? d.x : d.y, now, Seconds(1)), now);
    }
    run.RunToEnd();
    e.DropAllQueued(run.now());
    ASSERT_TRUE(log.EachEndedOnce(n));
    EXPECT_EQ(log.Count(DropReason::kInternal), 0);
    EXPECT_EQ(log.Count(DropReason::kUnservable), 0);
    EXPECT_EQ(log.Count(DropReason::kShutdown), 0);
    EXPECT_EQ(e.counters().invalid_decisions, 0);
  }
}

TEST(ComposedPoolTest, AQueryOfAModelNoWorkersHardwareServesEndsUnservableAtArrival) {
  const Disjoint d = DisjointSuite();
  PuppetExecutor exec;
  auto engine =
      Engine::Create(&d.suite, Pool({d.cpu, d.cpu}), testing::Policies("jsq", "edf"), &exec, {}, 1);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  testing::RecordLog log;
  e.set_sink(log.Sink());
  e.Submit(Of(d.y, kTimeZero, Seconds(1)), kTimeZero);
  EXPECT_EQ(log.Count(DropReason::kUnservable), 1);
  e.Submit(Of(d.x, kTimeZero, Seconds(1)), kTimeZero);
  EXPECT_EQ(exec.Runs().size(), 1u);
  EXPECT_EQ(e.counters().invalid_decisions, 0);
}

TEST(ComposedPoolTest, ADedicatedWorkerGetsOnlyItsModelsQueriesAndRunsItsVariants) {
  const ProfileSuite suite = testing::MultiModelSuite();  // image, text on one hardware type
  const TaskId image = 0, text = 1;
  for (const char* dispatch : {"round_robin", "jsq", "quota", "central", "shared"}) {
    SCOPED_TRACE(dispatch);
    PolicySet set = testing::Policies(dispatch, "edf");
    bool planned = false;
    set.planning =
        std::make_unique<testing::FnPlanning>([&](const PlanningInput&, DeploymentPlan* out) {
          if (planned) return;
          planned = true;
          WorkerPlan p;
          p.worker = 0;
          p.model = image;  // not pinned: its selection chooses among image's variants
          out->workers.push_back(p);
          out->change = true;
        });
    testing::VirtualRun run;
    ASSERT_TRUE(run.Start(&suite, testing::Workers(3), std::move(set)).ok());
    Engine& e = run.engine();
    e.OnPlanTick(run.now());
    ASSERT_EQ(e.workers()[0].model, image);
    EXPECT_EQ(e.workers()[0].pinned, kNoId);
    EXPECT_EQ(e.workers()[1].model, kNoId);
    testing::RecordLog log;
    e.set_sink(log.Sink());
    TimePoint now = run.now();
    const int n = 600;
    for (int i = 0; i < n; ++i) {
      now += Millis(10);
      const TaskId t = i % 3 == 0 ? text : image;
      run.Submit(Of(t, now, suite.tasks()[t].default_slo * 20), now);
    }
    run.RunToEnd();
    e.DropAllQueued(run.now());
    ASSERT_TRUE(log.EachEndedOnce(n));
    EXPECT_EQ(log.Count(DropReason::kInternal), 0);
    EXPECT_EQ(e.counters().invalid_decisions, 0);
    int on_dedicated = 0, text_elsewhere = 0;
    for (const QueryRecord& r : log.records) {
      if (r.dropped) continue;
      if (r.worker == 0) {
        ++on_dedicated;
        EXPECT_EQ(r.task, image) << r.id;
        EXPECT_EQ(suite.variants()[r.variant].task, image) << r.id;
      } else {
        text_elsewhere += r.task == text ? 1 : 0;
      }
    }
    EXPECT_GT(on_dedicated, 0);
    EXPECT_EQ(text_elsewhere, n / 3);
  }
}

TEST(ComposedPoolTest, APlansModelIsCheckedAgainstItsPinAndKeptUntilUndone) {
  const ProfileSuite suite = testing::MultiModelSuite();
  const TaskId image = 0, text = 1;
  const VariantId img_fast = *suite.FindVariant("img_fast");
  std::vector<WorkerPlan> next;
  PolicySet set = testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(8, img_fast),
                                   [&](const PlanningInput&, DeploymentPlan* out) {
                                     out->workers = next;
                                     out->change = true;
                                   });
  PuppetExecutor exec;
  std::vector<std::string> warnings;
  EngineOptions opts;
  opts.log = [&](const std::string& line) { warnings.push_back(line); };
  auto engine = Engine::Create(&suite, testing::Workers(3), std::move(set), &exec, opts, 1);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  WorkerPlan mismatch;  // a pin of image's variant beside model text: refused
  mismatch.worker = 0;
  mismatch.pinned = img_fast;
  mismatch.model = text;
  WorkerPlan unknown;  // no such model: refused
  unknown.worker = 1;
  unknown.model = 7;
  WorkerPlan pin;  // the pin implies its model
  pin.worker = 2;
  pin.pinned = img_fast;
  next = {mismatch, unknown, pin};
  e.OnPlanTick(kTimeZero);
  EXPECT_EQ(e.counters().invalid_decisions, 2);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("another model"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("unknown model"), std::string::npos) << warnings[1];
  EXPECT_EQ(e.workers()[0].pinned, kNoId);
  EXPECT_EQ(e.workers()[0].model, kNoId);
  EXPECT_EQ(e.workers()[1].model, kNoId);
  EXPECT_EQ(e.workers()[2].model, image);

  WorkerPlan unpin;  // unpinned, no model named: the dedication stays
  unpin.worker = 2;
  next = {unpin};
  e.OnPlanTick(kTimeZero + Seconds(1));
  EXPECT_EQ(e.workers()[2].pinned, kNoId);
  EXPECT_EQ(e.workers()[2].model, image);

  WorkerPlan undo;  // kAnyModel: every model again
  undo.worker = 2;
  undo.model = kAnyModel;
  WorkerPlan added;  // a new worker takes its plan's model
  added.model = text;
  next = {undo, added};
  e.OnPlanTick(kTimeZero + Seconds(2));
  EXPECT_EQ(e.workers()[2].model, kNoId);
  ASSERT_EQ(e.workers().size(), 4u);
  EXPECT_EQ(e.workers()[3].model, text);
  EXPECT_EQ(e.counters().invalid_decisions, 2);
}

TEST(ComposedPoolTest, DedicatingABusyWorkerSendsItsOtherModelsQueriesBackToThePool) {
  const ProfileSuite suite = testing::MultiModelSuite();
  const TaskId image = 0, text = 1;
  bool plan = false;
  PolicySet set = testing::Policies("jsq", "edf");
  set.planning =
      std::make_unique<testing::FnPlanning>([&](const PlanningInput&, DeploymentPlan* out) {
        if (!plan) return;
        WorkerPlan p;
        p.worker = 0;
        p.model = image;
        out->workers.push_back(p);
        out->change = true;
      });
  PuppetExecutor exec;
  auto engine = Engine::Create(&suite, testing::Workers(2), std::move(set), &exec, {}, 1);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  testing::RecordLog log;
  e.set_sink(log.Sink());
  // Both workers busy, then a text query queued on each.
  e.Submit(Of(image, kTimeZero, Seconds(5)), kTimeZero);
  e.Submit(Of(image, kTimeZero, Seconds(5)), kTimeZero);
  e.Submit(Of(text, kTimeZero, Seconds(5)), kTimeZero);
  e.Submit(Of(text, kTimeZero, Seconds(5)), kTimeZero);
  ASSERT_EQ(exec.Runs().size(), 2u);
  ASSERT_EQ(e.workers()[0].queue_length, 1u);
  plan = true;
  e.OnPlanTick(kTimeZero + Millis(1));
  // Worker 0's text query went back and on to worker 1, the one serving text.
  EXPECT_EQ(e.workers()[0].queue_length, 0u);
  EXPECT_EQ(e.workers()[1].queue_length, 2u);
  for (size_t i = 0; i < 2; ++i) exec.Answer(e, exec.Runs()[i], kTimeZero + Millis(300));
  while (exec.Runs().size() > 2 && e.in_system() > 0) {
    exec.Answer(e, exec.Runs().back(), kTimeZero + Millis(900));
  }
  EXPECT_TRUE(log.EachEndedOnce(4));
  EXPECT_EQ(log.Count(DropReason::kInternal), 0);
  EXPECT_EQ(e.counters().invalid_decisions, 0);
}

TEST(ComposedPoolTest, ThePlannerSeesEachModelsArrivalRate) {
  const ProfileSuite suite = testing::MultiModelSuite();
  const TaskId image = 0, text = 1;
  std::vector<std::vector<double>> qps, last_history;
  std::vector<size_t> history_sizes;
  const VariantId img = *suite.FindVariant("img_fast"), txt = *suite.FindVariant("txt_only");
  PolicySet set = testing::MakeSet(
      testing::RoundRobinActive(),
      testing::TakeFront(1, [&](const Query& q) { return q.task == image ? img : txt; }),
      [&](const PlanningInput& in, DeploymentPlan*) {
        qps.emplace_back(in.model_qps.begin(), in.model_qps.end());
        ASSERT_EQ(in.model_rate_history.size(), 2u);
        history_sizes.push_back(in.model_rate_history[0].size());
        last_history.push_back({in.model_rate_history[0].back(), in.model_rate_history[1].back()});
      });
  PuppetExecutor exec;
  auto engine = Engine::Create(&suite, testing::Workers(1), std::move(set), &exec, {}, 1);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  // 30 image and 10 text queries in the first 10 s, 5 text in the next 5 s.
  for (int i = 0; i < 40; ++i) {
    const TimePoint at = kTimeZero + Millis(250 * i);
    e.Submit(Of(i % 4 == 3 ? text : image, at, Seconds(100)), at);
  }
  e.OnPlanTick(kTimeZero + Seconds(10));
  for (int i = 0; i < 5; ++i) {
    const TimePoint at = kTimeZero + Seconds(10) + Millis(500 * i);
    e.Submit(Of(text, at, Seconds(100)), at);
  }
  e.OnPlanTick(kTimeZero + Seconds(15));
  ASSERT_EQ(qps.size(), 2u);
  EXPECT_EQ(qps[0], (std::vector<double>{3.0, 1.0}));
  EXPECT_EQ(qps[1], (std::vector<double>{0.0, 1.0}));
  EXPECT_EQ(history_sizes, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(last_history[1], qps[1]);
}

TEST(ComposedPoolTest, OneTaskLeavesThePerModelRatesEmpty) {
  ProfileSuite suite;
  const TaskId t = suite.AddTask(TaskSpec{"t", Seconds(1)});
  const HardwareId h = suite.AddHardware(HardwareSpec{"hw", 1.0, 4, 0});
  const VariantId v = suite.AddVariant(VariantSpec{"v", t, 70, 100, Millis(10)});
  suite.AddLatency(h, v, 1, LatencyDistribution(std::vector<int64_t>(3, 1000)));
  bool called = false;
  PolicySet set = testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(1, v),
                                   [&](const PlanningInput& in, DeploymentPlan*) {
                                     called = true;
                                     EXPECT_TRUE(in.model_qps.empty());
                                     EXPECT_TRUE(in.model_rate_history.empty());
                                     EXPECT_DOUBLE_EQ(in.observed_qps, 0.5);
                                   });
  PuppetExecutor exec;
  auto engine = Engine::Create(&suite, testing::Workers(1), std::move(set), &exec, {}, 1);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  (*engine)->Submit(Of(t, kTimeZero, Seconds(1)), kTimeZero);
  (*engine)->OnPlanTick(kTimeZero + Seconds(2));
  EXPECT_TRUE(called);
}

// The composed planner adds workers of types the pool did not start with: Kairos' family
// computes their coefficients when they appear, for a multi-model and a one-model suite
// alike (before, their queries waited centrally for ever).
TEST(ComposedPoolTest, KairosDispatchersServeOnATypeAPlanAddsAfterInit) {
  const Disjoint d = DisjointSuite();
  for (const char* dispatch : {"kairos", "ribbon", "drs", "clkwrk"}) {
    SCOPED_TRACE(dispatch);
    PolicySet set = testing::Policies(dispatch, "edf");
    bool planned = false;
    set.planning =
        std::make_unique<testing::FnPlanning>([&](const PlanningInput&, DeploymentPlan* out) {
          if (planned) return;
          planned = true;
          WorkerPlan p;  // a new gpu worker for y; the pool had cpu only
          p.hardware = d.gpu;
          p.pinned = d.suite.FindVariant("y2").value();
          out->workers.push_back(p);
          out->change = true;
        });
    testing::VirtualRun run;
    ASSERT_TRUE(run.Start(&d.suite, Pool({d.cpu}), std::move(set)).ok());
    Engine& e = run.engine();
    e.OnPlanTick(run.now());
    run.RunToEnd();  // the new worker loads its variant
    ASSERT_EQ(e.workers().size(), 2u);
    ASSERT_TRUE(e.workers()[1].active);
    testing::RecordLog log;
    e.set_sink(log.Sink());
    TimePoint now = run.now();
    const int n = 200;
    for (int i = 0; i < n; ++i) {
      now += Millis(3);
      run.Submit(Of(i % 2 == 0 ? d.x : d.y, now, Seconds(1)), now);
    }
    run.RunToEnd();
    e.DropAllQueued(run.now());
    EXPECT_EQ(log.Count(DropReason::kShutdown), 0);
    EXPECT_EQ(log.Completed(), n);
    EXPECT_EQ(e.counters().invalid_decisions, 0);
  }
}

// A dispatcher that gives queries only to idle workers with an empty queue (Kairos) and a
// batching policy that drops what it is given (ORLOJ's timeouts): the worker is idle again
// at once, and the central queue must not wait for an event that never comes.
TEST(ComposedPoolTest, AWorkerThatDropsWhatItIsGivenIsOfferedTheNextQuery) {
  const ProfileSuite suite = testing::MultiModelSuite();
  auto idle_only = [](const QueueView& q, const std::vector<WorkerView>& w, TimePoint,
                      std::vector<Assignment>* out) {
    if (!q.empty() && w[0].active && !w[0].busy && w[0].queue_length == 0)
      out->push_back({0, w[0].id});
  };
  auto drop_odd = [](const WorkerView&, const QueueView& q, TimePoint, BatchDecision* d) {
    if (q.empty()) return;
    if (q.front().id % 2 == 1) {
      d->drop.push_back(0);
      return;
    }
    d->kind = BatchDecision::Kind::kRun;
    d->variant = 0;
    d->take.push_back(0);
  };
  testing::VirtualRun run;
  ASSERT_TRUE(run.Start(&suite, testing::Workers(1), testing::MakeSet(idle_only, drop_odd)).ok());
  Engine& e = run.engine();
  testing::RecordLog log;
  e.set_sink(log.Sink());
  const int n = 9;  // all at once: one runs, the rest wait centrally
  for (int i = 0; i < n; ++i) run.Submit(Of(0, run.now(), Seconds(10)), run.now());
  run.RunToEnd();
  EXPECT_EQ(e.in_system(), 0u) << e.DescribeBacklog();
  e.DropAllQueued(run.now());
  EXPECT_EQ(log.Count(DropReason::kShutdown), 0);
  EXPECT_EQ(log.Count(DropReason::kPolicy), (n + 1) / 2);
  EXPECT_EQ(log.Completed(), n / 2);
}

// A pinned worker runs its pin whatever the selection chose, so the batching policy must
// size its batches for the pin: ORLOJ, handed the selection's slow variant, dropped every
// query as one that could not finish in time.
TEST(ComposedPoolTest, BatchingOnAPinnedWorkerPlansForThePinnedVariant) {
  const ProfileSuite suite = testing::MultiModelSuite();  // img_fast 10 ms, img_slow 30 ms
  const VariantId fast = suite.FindVariant("img_fast").value();
  for (const char* batching : {"orloj", "edf"}) {
    SCOPED_TRACE(batching);
    PolicySet set = testing::Policies("round_robin", batching);  // fixed: img_slow, 80%
    bool planned = false;
    set.planning =
        std::make_unique<testing::FnPlanning>([&](const PlanningInput&, DeploymentPlan* out) {
          if (planned) return;
          planned = true;
          WorkerPlan p;
          p.worker = 0;
          p.pinned = fast;
          out->workers.push_back(p);
          out->change = true;
        });
    testing::VirtualRun run;
    ASSERT_TRUE(run.Start(&suite, testing::Workers(1), std::move(set)).ok());
    Engine& e = run.engine();
    e.OnPlanTick(run.now());
    ASSERT_EQ(e.workers()[0].pinned, fast);
    testing::RecordLog log;
    e.set_sink(log.Sink());
    TimePoint now = run.now();
    const int n = 50;
    for (int i = 0; i < n; ++i) {
      now += Millis(20);
      run.Submit(Of(0, now, Millis(25)), now);  // img_slow cannot make 25 ms, img_fast can
    }
    run.RunToEnd();
    e.DropAllQueued(run.now());
    EXPECT_EQ(log.Count(DropReason::kPolicy), 0);
    int met = 0;
    for (const QueryRecord& r : log.records) met += r.met_slo ? 1 : 0;
    EXPECT_EQ(met, n);
  }
}

// per_model: each model's queries decided by its own dispatcher. Kairos gives one query at
// a time to an idle instance; y's queries under it never share a batch, x's (jsq) do.
TEST(ComposedPoolTest, PerModelDispatchHandsEachModelToItsOwnDispatcher) {
  const Disjoint d = DisjointSuite();
  testing::VirtualRun run;
  ASSERT_TRUE(run.Start(&d.suite, Pool({d.cpu, d.gpu, d.cpu, d.gpu}),
                        testing::Policies("per_model", "edf", {{"model_dispatch", "y=kairos"}}))
                  .ok());
  Engine& e = run.engine();
  testing::RecordLog log;
  e.set_sink(log.Sink());
  TimePoint now = kTimeZero;
  const int n = 400;
  for (int i = 0; i < n; ++i) {
    if (i % 8 == 0) now += Millis(2);  // bursts of 8: batches form where the dispatcher lets them
    run.Submit(Of(i % 2 == 0 ? d.x : d.y, now, Seconds(1)), now);
  }
  run.RunToEnd();
  e.DropAllQueued(run.now());
  ASSERT_TRUE(log.EachEndedOnce(n));
  EXPECT_EQ(log.Completed(), n);
  EXPECT_EQ(e.counters().invalid_decisions, 0);
  int max_x = 0, max_y = 0;
  for (const QueryRecord& r : log.records) {
    EXPECT_EQ(e.workers()[r.worker].hardware, r.task == d.x ? d.cpu : d.gpu) << r.id;
    (r.task == d.x ? max_x : max_y) = std::max(r.task == d.x ? max_x : max_y, r.batch_size);
  }
  EXPECT_GT(max_x, 1);  // jsq queues several on a worker: EDF batches them
  EXPECT_EQ(max_y, 1);  // Kairos: one query per idle instance
}

TEST(ComposedPoolTest, PerModelDispatchNamesAnUnknownModelOrDispatcher) {
  const Disjoint d = DisjointSuite();
  for (const auto& [option, expected] :
       std::vector<std::pair<std::string, std::string>>{{"z=kairos", "no model 'z'"},
                                                        {"y=kairoz", "kairoz"},
                                                        {"y=shared", "shared queue"},
                                                        {"y", "not name=value"}}) {
    SCOPED_TRACE(option);
    PolicySpec spec;
    spec.dispatch = "per_model";
    spec.options = {{"model_dispatch", option}};
    StatusOr<PolicySet> set = MakePolicySet(spec);
    Status st = set.status();
    if (set.ok()) {
      testing::VirtualRun run;
      st = run.Start(&d.suite, Pool({d.cpu, d.gpu}), std::move(set).value());
    }
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(expected), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace sloserve

// Many models on one pool (docs/multi-model.md, "Engine"): per-model queues (no batch mixes
// models), EDF across models, per-model batching policies initialised with their model's
// SLO, every batch decision validated (model, hardware, rows), per-model summaries.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sloserve/engine/engine.h"
#include "support/engine_fixtures.h"
#include "support/puppet_executor.h"
#include "support/test_policies.h"
#include "support/virtual_run.h"

namespace sloserve {
namespace {

using testing::PuppetExecutor;

// Three models: "a" (a1 on cpu and gpu, a2 on gpu only), "b" (b1 on cpu only) and "c"
// (c1 on both); batches of up to 4 rows on cpu, 8 on gpu.
struct Ids {
  TaskId a = 0, b = 0, c = 0;
  HardwareId cpu = 0, gpu = 0;
  VariantId a1 = 0, a2 = 0, b1 = 0, c1 = 0;
};

ProfileSuite ThreeModelSuite(Ids* ids) {
  ProfileSuite s;
  s.set_name("three-models");
  ids->a = s.AddTask(TaskSpec{"a", Millis(100)});
  ids->b = s.AddTask(TaskSpec{"b", Millis(300)});
  ids->c = s.AddTask(TaskSpec{"c", Millis(700)});
  ids->cpu = s.AddHardware(HardwareSpec{"cpu", 1.0, 4, 0});
  ids->gpu = s.AddHardware(HardwareSpec{"gpu", 3.0, 8, 0});
  ids->a1 = s.AddVariant(VariantSpec{"a1", ids->a, 70, 100, Millis(10)});
  ids->a2 = s.AddVariant(VariantSpec{"a2", ids->a, 80, 100, Millis(10)});
  ids->b1 = s.AddVariant(VariantSpec{"b1", ids->b, 60, 100, Millis(10)});
  ids->c1 = s.AddVariant(VariantSpec{"c1", ids->c, 50, 100, Millis(10)});
  auto lat = [](int64_t us) { return LatencyDistribution(std::vector<int64_t>(3, us)); };
  for (int k = 1; k <= 4; ++k) {
    s.AddLatency(ids->cpu, ids->a1, k, lat(2000 + 1000 * k));
    s.AddLatency(ids->cpu, ids->b1, k, lat(3000 + 1500 * k));
    s.AddLatency(ids->cpu, ids->c1, k, lat(4000 + 500 * k));
  }
  for (int k = 1; k <= 8; ++k) {
    s.AddLatency(ids->gpu, ids->a1, k, lat(1000 + 200 * k));
    s.AddLatency(ids->gpu, ids->a2, k, lat(1500 + 300 * k));
    s.AddLatency(ids->gpu, ids->c1, k, lat(2000 + 100 * k));
  }
  return s;
}

Query ModelQuery(TaskId task, TimePoint now, Duration slo, int32_t size = 1) {
  Query q;
  q.task = task;
  q.size = size;
  q.deadline = now + slo;
  return q;
}

// A batching policy that records what it was told: Init's context, arrivals, and the
// models of the queues it was shown. It takes the whole queue (up to `max` queries) on
// `variant_of(worker, queue head)`.
class ModelRecordingBatching : public BatchingPolicy {
 public:
  using VariantOf = std::function<VariantId(const WorkerView&, const Query&)>;
  ModelRecordingBatching(size_t max, VariantOf variant_of)
      : max_(max), variant_of_(std::move(variant_of)) {}
  Status Init(const PolicyContext& ctx) override {
    ++inits;
    task = ctx.task;
    slo = ctx.slo;
    return OkStatus();
  }
  void NextBatch(const WorkerView& w, const QueueView& q, TimePoint, BatchDecision* d) override {
    d->Clear();
    if (q.empty()) return;
    for (size_t i = 0; i < q.size(); ++i) seen_tasks.insert(q.at(i).task);
    d->kind = BatchDecision::Kind::kRun;
    d->variant = variant_of_(w, q.front());
    for (uint32_t i = 0; i < q.size() && i < max_; ++i) d->take.push_back(i);
  }
  void OnArrival(const Query& q, TimePoint) override { arrivals.push_back(q.task); }
  void OnBatchComplete(const BatchCompletion& c) override { completed_variants.insert(c.variant); }

  int inits = 0;
  TaskId task = kNoId;
  Duration slo{};
  std::vector<TaskId> arrivals;
  std::set<TaskId> seen_tasks;
  std::set<VariantId> completed_variants;

 private:
  size_t max_;
  VariantOf variant_of_;
};

// The first variant of the head's model profiled on the worker's hardware.
ModelRecordingBatching::VariantOf OwnModelVariant(const ProfileSuite* suite) {
  return [suite](const WorkerView& w, const Query& head) {
    for (VariantId v : suite->VariantsOfTask(head.task)) {
      if (!suite->BatchSizes(w.hardware, v).empty()) return v;
    }
    return kNoId;
  };
}

std::vector<WorkerSpec> MixedPool(const Ids& ids, int cpus, int gpus) {
  std::vector<WorkerSpec> w;
  for (int i = 0; i < cpus + gpus; ++i) {
    WorkerSpec s;
    s.name = (i < cpus ? "cpu" : "gpu") + std::to_string(i);
    s.hardware = i < cpus ? ids.cpu : ids.gpu;
    w.push_back(s);
  }
  return w;
}

TEST(MultiModelEngineTest, NoBatchMixesModelsAndSummariesSumToTotals) {
  Ids ids;
  const ProfileSuite suite = ThreeModelSuite(&ids);
  for (const char* dispatch : {"round_robin", "jsq", "shared"}) {
    for (bool admission : {false, true}) {
      SCOPED_TRACE(std::string(dispatch) + (admission ? " with admission" : ""));
      // b runs on cpu only: the pool has cpu workers for it, and gpus for a and c.
      std::vector<WorkerSpec> workers = MixedPool(ids, 3, 2);
      testing::VirtualRun run;
      EngineOptions opts;
      opts.admission.enabled = admission;  // per model: its own variants and SLO
      ASSERT_TRUE(
          run.Start(&suite, workers, testing::Policies(dispatch, "edf"), nullptr, opts).ok());
      Engine& e = run.engine();
      testing::RecordLog log;
      e.set_sink(log.Sink());
      std::mt19937 rng(11);
      std::map<TaskId, int64_t> submitted;
      TimePoint now = kTimeZero;
      for (int i = 0; i < 3000; ++i) {
        now += Micros(static_cast<int64_t>(rng() % 900));
        const TaskId t = static_cast<TaskId>(rng() % 3);
        ++submitted[t];
        run.Submit(ModelQuery(t, now, suite.tasks()[t].default_slo), now);
      }
      run.RunToEnd();
      e.DropAllQueued(run.now());
      ASSERT_TRUE(log.EachEndedOnce(3000));

      // Every answer came from the query's own model, and the queries of one batch (one
      // worker, one start) are of one model.
      std::map<std::pair<WorkerId, TimePoint>, std::set<TaskId>> batches;
      for (const QueryRecord& r : log.records) {
        if (r.dropped) continue;
        ASSERT_LT(r.variant, suite.variants().size());
        EXPECT_EQ(suite.variants()[r.variant].task, r.task) << "query " << r.id;
        EXPECT_FALSE(suite.BatchSizes(e.workers()[r.worker].hardware, r.variant).empty());
        batches[{r.worker, r.start}].insert(r.task);
      }
      EXPECT_GT(batches.size(), 100u);
      for (const auto& [key, tasks] : batches) EXPECT_EQ(tasks.size(), 1u);
      EXPECT_EQ(e.counters().invalid_decisions, 0);

      // Per-model summaries partition the totals.
      const MetricsSummary total = e.Summarize(run.now());
      const std::vector<MetricsSummary> by_model = e.SummarizeByModel(run.now());
      ASSERT_EQ(by_model.size(), 3u);
      int64_t arrived = 0, completed = 0, met = 0, dropped = 0, batches_sum = 0;
      double utilization = 0;
      for (TaskId t = 0; t < 3; ++t) {
        EXPECT_EQ(by_model[t].arrived, submitted[t]) << "model " << t;
        EXPECT_GT(by_model[t].completed, 0) << "model " << t;
        arrived += by_model[t].arrived;
        completed += by_model[t].completed;
        met += by_model[t].met;
        dropped += by_model[t].dropped;
        batches_sum += by_model[t].batches;
        utilization += by_model[t].utilization;
      }
      EXPECT_EQ(arrived, total.arrived);
      EXPECT_EQ(completed, total.completed);
      EXPECT_EQ(met, total.met);
      EXPECT_EQ(dropped, total.dropped);
      EXPECT_EQ(batches_sum, total.batches);
      EXPECT_NEAR(utilization, total.utilization, 1e-9);
      // Each model's latency quantiles lie within the pool's range.
      for (TaskId t = 0; t < 3; ++t) {
        EXPECT_LE(by_model[t].p50_ms, total.max_ms * 1.01);
        EXPECT_LE(by_model[t].p50_ms, by_model[t].p99_ms);
        EXPECT_LE(by_model[t].p99_ms, by_model[t].max_ms + 1e-9);
      }
    }
  }
}

// Admission per model: a query of b, whose only worker (cpu) runs a's queries too (EDF
// across models: a's 100 ms deadlines go first), waits behind every model's queue, so a
// burst of a sheds it. (On workers serving only their model, only the model's own queue
// counts: ComposedPoolTest.AdmissionOfAModelOnItsOwnWorkersIgnoresTheOthersQueues.)
TEST(MultiModelEngineTest, AdmissionOfAModelOnSharedWorkersCountsEveryModelsQueue) {
  Ids ids;
  const ProfileSuite suite = ThreeModelSuite(&ids);
  std::vector<WorkerSpec> workers = MixedPool(ids, 1, 1);  // b runs on the cpu worker only
  testing::VirtualRun run;
  EngineOptions opts;
  opts.admission.enabled = true;
  opts.slo = Millis(100);  // the engine's task (a)'s
  ASSERT_TRUE(run.Start(&suite, workers, testing::Policies("jsq", "edf"), nullptr, opts).ok());
  Engine& e = run.engine();
  testing::RecordLog log;
  e.set_sink(log.Sink());
  // 400 queries of a at once: a's admission keeps what a's workers finish in time (a few
  // hundred rows of its 100 ms SLO); b's cpu worker clears ~130 rows in b's 300 ms.
  for (int i = 0; i < 400; ++i) run.Submit(ModelQuery(ids.a, kTimeZero, Millis(100)), kTimeZero);
  ASSERT_GT(e.queued_rows(), 150);
  for (int i = 0; i < 5; ++i) run.Submit(ModelQuery(ids.b, kTimeZero, Millis(300)), kTimeZero);
  run.RunToEnd();
  e.DropAllQueued(run.now());
  ASSERT_TRUE(log.EachEndedOnce(405));
  int b_shed = 0;
  for (const QueryRecord& r : log.records)
    b_shed += r.task == ids.b && r.drop_reason == DropReason::kShed;
  EXPECT_EQ(b_shed, 5);
}

TEST(MultiModelEngineTest, TheModelWhoseHeadIsDueFirstIsServedFirst) {
  Ids ids;
  const ProfileSuite suite = ThreeModelSuite(&ids);
  PuppetExecutor exec;
  auto engine = Engine::Create(&suite, MixedPool(ids, 1, 0),
                               testing::Policies("round_robin", "edf"), &exec, {}, 1);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  const TimePoint t0 = kTimeZero;
  e.Submit(ModelQuery(ids.a, t0, Millis(100)), t0);                          // 1: starts at once
  e.Submit(ModelQuery(ids.b, t0 + Millis(1), Millis(50)), t0 + Millis(1));   // 2: due at 51 ms
  e.Submit(ModelQuery(ids.c, t0 + Millis(2), Millis(30)), t0 + Millis(2));   // 3: due at 32 ms
  e.Submit(ModelQuery(ids.b, t0 + Millis(3), Millis(200)), t0 + Millis(3));  // 4: due at 203 ms
  e.Submit(ModelQuery(ids.a, t0 + Millis(4), Millis(300)), t0 + Millis(4));  // 5: due at 304 ms
  ASSERT_EQ(exec.Runs().size(), 1u);
  EXPECT_EQ(e.workers()[0].queue_length, 4u);  // the worker's total over its models
  EXPECT_EQ(e.workers()[0].queued_rows, 4);
  // c (due 32 ms), then b's two (its head is due at 51 ms), then a.
  std::vector<std::vector<QueryId>> order;
  for (size_t i = 0; i < 4; ++i) {
    exec.Answer(e, exec.Runs()[i], t0 + Millis(10 + static_cast<int64_t>(i)));
    ASSERT_EQ(exec.Runs().size(), i + 2 > 4 ? 4 : i + 2);
    if (i + 1 < exec.Runs().size()) order.push_back(exec.sent[exec.Runs()[i + 1]].ids);
  }
  EXPECT_EQ(order, (std::vector<std::vector<QueryId>>{{3}, {2, 4}, {5}}));
  EXPECT_EQ(e.in_system(), 0u);
}

TEST(MultiModelEngineTest, APinnedWorkerServesOnlyItsVariantsModel) {
  Ids ids;
  const ProfileSuite suite = ThreeModelSuite(&ids);
  PuppetExecutor exec;
  // gpu0 pinned to a2 (model a) by the first plan; everything is routed to it.
  bool planned = false;
  PolicySet set = testing::MakeSet(
      testing::Route([](const Query&, const std::vector<WorkerView>&) { return WorkerId{0}; }),
      testing::TakeFront(8, [&](const Query& q) { return q.task == ids.a ? ids.a1 : ids.c1; }),
      [&](const PlanningInput&, DeploymentPlan* out) {
        if (planned) return;
        planned = true;
        WorkerPlan p;
        p.worker = 0;
        p.pinned = ids.a2;
        out->workers.push_back(p);
        out->change = true;
      });
  EngineOptions opts;
  opts.names.dispatch = "probe-dispatch";
  std::vector<std::string> warnings;
  opts.log = [&](const std::string& line) { warnings.push_back(line); };
  auto engine = Engine::Create(&suite, MixedPool(ids, 0, 1), std::move(set), &exec, opts, 1);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  testing::RecordLog log;
  e.set_sink(log.Sink());
  e.OnPlanTick(kTimeZero);
  e.Submit(ModelQuery(ids.a, kTimeZero, Millis(100)), kTimeZero);  // runs on a2 (the pin)
  e.Submit(ModelQuery(ids.c, kTimeZero, Millis(100)), kTimeZero);  // refused: another model
  ASSERT_EQ(exec.Runs().size(), 1u);
  EXPECT_EQ(exec.sent[exec.Runs()[0]].variant, ids.a2);
  EXPECT_EQ(e.counters().invalid_decisions, 1);
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("probe-dispatch"), std::string::npos) << warnings[0];
  EXPECT_EQ(log.Count(DropReason::kInternal), 1);
  exec.Answer(e, exec.Runs()[0], kTimeZero + Millis(5));
  EXPECT_TRUE(log.EachEndedOnce(2));
}

TEST(MultiModelEngineTest, EachModelsPolicyIsInitialisedWithItsSloAndSeesOnlyItsQueries) {
  Ids ids;
  const ProfileSuite suite = ThreeModelSuite(&ids);
  PuppetExecutor exec;
  PolicySet set = testing::MakeSet(
      testing::Route([](const Query&, const std::vector<WorkerView>&) { return WorkerId{1}; }),
      testing::TakeFront(8, [&](const Query&) { return ids.c1; }));  // the pool's: model c
  auto own_a = std::make_unique<ModelRecordingBatching>(8, OwnModelVariant(&suite));
  auto own_b = std::make_unique<ModelRecordingBatching>(8, OwnModelVariant(&suite));
  ModelRecordingBatching* a = own_a.get();
  ModelRecordingBatching* b = own_b.get();
  set.model_batching.resize(2);
  set.model_batching[ids.a] = std::move(own_a);
  set.model_batching[ids.b] = std::move(own_b);
  EngineOptions opts;
  opts.task = ids.a;
  opts.slo = Millis(120);
  opts.model_slo = {Duration(0), Millis(250)};  // a: `slo`; b: 250 ms; c: its default
  auto engine = Engine::Create(&suite, MixedPool(ids, 2, 0), std::move(set), &exec, opts, 1);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  EXPECT_EQ(a->inits, 1);
  EXPECT_EQ(a->task, ids.a);
  EXPECT_EQ(a->slo, Millis(120));
  EXPECT_EQ(b->inits, 1);
  EXPECT_EQ(b->task, ids.b);
  EXPECT_EQ(b->slo, Millis(250));
  EXPECT_EQ(e.ModelSlo(ids.c), Millis(700));  // the suite's default for c

  testing::RecordLog log;
  e.set_sink(log.Sink());
  const std::vector<TaskId> tasks = {ids.a, ids.b, ids.c, ids.b, ids.a, ids.c, ids.b};
  TimePoint now = kTimeZero;
  for (TaskId t : tasks) {
    e.Submit(ModelQuery(t, now, Millis(100)), now);
    now += Millis(1);
  }
  exec.AnswerAll(e, now + Millis(50));
  EXPECT_TRUE(log.EachEndedOnce(tasks.size()));
  EXPECT_EQ(log.Completed(), static_cast<int64_t>(tasks.size()));
  EXPECT_EQ(a->arrivals, (std::vector<TaskId>{ids.a, ids.a}));
  EXPECT_EQ(b->arrivals, (std::vector<TaskId>{ids.b, ids.b, ids.b}));
  EXPECT_EQ(a->seen_tasks, (std::set<TaskId>{ids.a}));
  EXPECT_EQ(b->seen_tasks, (std::set<TaskId>{ids.b}));
  EXPECT_EQ(a->completed_variants, (std::set<VariantId>{ids.a1}));
  EXPECT_EQ(b->completed_variants, (std::set<VariantId>{ids.b1}));
  for (const QueryRecord& r : log.records) EXPECT_EQ(suite.variants()[r.variant].task, r.task);
  EXPECT_EQ(e.counters().invalid_decisions, 0);
}

TEST(MultiModelEngineTest, ModelOptionsBeyondTheSuiteAreRefused) {
  Ids ids;
  const ProfileSuite suite = ThreeModelSuite(&ids);
  PuppetExecutor exec;
  PolicySet set = testing::Policies("round_robin", "edf");
  set.model_batching.resize(5);
  set.model_batching[4] = std::make_unique<ModelRecordingBatching>(1, OwnModelVariant(&suite));
  EXPECT_FALSE(Engine::Create(&suite, MixedPool(ids, 1, 0), std::move(set), &exec, {}, 1).ok());
  EngineOptions opts;
  opts.model_slo = {Millis(-5)};
  EXPECT_FALSE(Engine::Create(&suite, MixedPool(ids, 1, 0), testing::Policies("round_robin", "edf"),
                              &exec, opts, 1)
                   .ok());
}

// A batching policy that errs one way: the batch is refused (counted, warned about with the
// policy's name), never sent, and its queries end once each as `internal`.
struct RefusedBatchCase {
  const char* what;
  std::function<VariantId(const Ids&)> variant;
  int32_t size;     // rows of each query
  size_t take;      // queries per batch
  const char* say;  // in the warning
};

TEST(MultiModelEngineTest, RefusedBatchesAreCountedNeverAppliedAndLoseNoQuery) {
  Ids ids;
  const ProfileSuite suite = ThreeModelSuite(&ids);
  const std::vector<RefusedBatchCase> cases = {
      {"another model's variant", [](const Ids& i) { return i.b1; }, 1, 2, "of model 'a'"},
      {"a variant not profiled on the hardware", [](const Ids& i) { return i.a2; }, 1, 2,
       "not profiled on hardware 'cpu'"},
      {"more rows than the largest profiled batch", [](const Ids& i) { return i.a1; }, 5, 1,
       "largest profiled batch"},
      {"an unknown variant", [](const Ids&) { return VariantId{99}; }, 1, 1, "unknown variant"},
  };
  for (bool shared : {false, true}) {
    for (const RefusedBatchCase& c : cases) {
      SCOPED_TRACE(std::string(c.what) + (shared ? " shared" : " per-worker"));
      PuppetExecutor exec;
      PolicySet set;
      set.dispatch = std::make_unique<testing::FnDispatch>(testing::RoundRobinActive(), shared);
      set.batching = std::make_unique<testing::FnBatching>(
          testing::TakeFront(c.take, [&](const Query&) { return c.variant(ids); }));
      EngineOptions opts;
      opts.names.batching = "probe-batching";
      std::vector<std::string> warnings;
      opts.log = [&](const std::string& line) { warnings.push_back(line); };
      auto engine = Engine::Create(&suite, MixedPool(ids, 2, 0), std::move(set), &exec, opts, 1);
      ASSERT_TRUE(engine.ok()) << engine.status().ToString();
      Engine& e = **engine;
      testing::RecordLog log;
      e.set_sink(log.Sink());
      for (int i = 0; i < 6; ++i)
        e.Submit(ModelQuery(ids.a, kTimeZero + Millis(i), Millis(100), c.size),
                 kTimeZero + Millis(i));
      EXPECT_TRUE(exec.sent.empty()) << "a refused batch was sent";
      EXPECT_GT(e.counters().invalid_decisions, 0);
      EXPECT_EQ(log.Count(DropReason::kInternal), 6);
      EXPECT_TRUE(log.EachEndedOnce(6));
      EXPECT_EQ(e.in_system(), 0u);
      ASSERT_FALSE(warnings.empty());
      EXPECT_NE(warnings[0].find("probe-batching"), std::string::npos) << warnings[0];
      EXPECT_NE(warnings[0].find(c.say), std::string::npos) << warnings[0];
      for (const WorkerView& w : e.workers()) {
        EXPECT_FALSE(w.busy);
        EXPECT_EQ(w.queue_length, 0u);
        EXPECT_EQ(w.queued_rows, 0);
      }
    }
  }
}

// A model's own policy that errs is named in the warning, and the other models are served.
TEST(MultiModelEngineTest, AModelsOwnPolicyThatErrsIsNamedAndTheOthersAreServed) {
  Ids ids;
  const ProfileSuite suite = ThreeModelSuite(&ids);
  PuppetExecutor exec;
  PolicySet set = testing::MakeSet(
      testing::Route([](const Query&, const std::vector<WorkerView>&) { return WorkerId{0}; }),
      testing::TakeFront(4, ids.a1));  // the pool's, for model a
  set.model_batching.resize(ids.b + 1);
  set.model_batching[ids.b] =
      std::make_unique<testing::FnBatching>(testing::TakeFront(4, ids.a1));  // wrong model
  EngineOptions opts;
  opts.names.model_batching = {"", "b-batching"};
  std::vector<std::string> warnings;
  opts.log = [&](const std::string& line) { warnings.push_back(line); };
  auto engine = Engine::Create(&suite, MixedPool(ids, 1, 0), std::move(set), &exec, opts, 1);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  testing::RecordLog log;
  e.set_sink(log.Sink());
  e.Submit(ModelQuery(ids.b, kTimeZero, Millis(50)), kTimeZero);   // refused: internal
  e.Submit(ModelQuery(ids.a, kTimeZero, Millis(100)), kTimeZero);  // served
  ASSERT_EQ(exec.Runs().size(), 1u);
  EXPECT_EQ(exec.sent[exec.Runs()[0]].ids, (std::vector<QueryId>{2}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("b-batching"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("of model 'b'"), std::string::npos) << warnings[0];
  exec.Answer(e, exec.Runs()[0], kTimeZero + Millis(5));
  EXPECT_TRUE(log.EachEndedOnce(2));
  EXPECT_EQ(log.Count(DropReason::kInternal), 1);
}

// The same policy within bounds (a1, 4 rows on cpu) runs: the refusals above are the
// checks', not the probe's.
TEST(MultiModelEngineTest, TheLargestProfiledBatchIsAccepted) {
  Ids ids;
  const ProfileSuite suite = ThreeModelSuite(&ids);
  PuppetExecutor exec;
  PolicySet set = testing::MakeSet(
      testing::Route([](const Query&, const std::vector<WorkerView>&) { return WorkerId{0}; }),
      testing::TakeFront(2, ids.a1));
  auto engine = Engine::Create(&suite, MixedPool(ids, 1, 0), std::move(set), &exec, {}, 1);
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  e.Submit(ModelQuery(ids.a, kTimeZero, Millis(100), 4), kTimeZero);
  e.Submit(ModelQuery(ids.a, kTimeZero, Millis(100), 2), kTimeZero);
  e.Submit(ModelQuery(ids.a, kTimeZero, Millis(100), 2), kTimeZero);
  ASSERT_EQ(exec.Runs().size(), 1u);
  EXPECT_EQ(exec.sent[exec.Runs()[0]].rows, 4);
  exec.Answer(e, exec.Runs()[0], kTimeZero + Millis(6));
  ASSERT_EQ(exec.Runs().size(), 2u);
  EXPECT_EQ(exec.sent[exec.Runs()[1]].rows, 4);  // 2 + 2
  EXPECT_EQ(e.counters().invalid_decisions, 0);
}

}  // namespace
}  // namespace sloserve

#include "sloserve/policy/selection/ramsis.h"

#include <gtest/gtest.h>

#include "support/multi_model_suite.h"
#include "support/test_suite.h"

#include <filesystem>
#include <map>

#include "policy/policy_test_util.h"
#include "sloserve/profile/profile.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

using testing::MakeWorkers;
using testing::QueueFixture;

TEST(RamsisSelectionTest, GeneratesAPolicyOffTheDecisionPathWhenNoneCoversTheLoad) {
  static const ProfileSuite* suite = &testing::EmbeddedSuite("ramsis-image");
  const testing::ScopedTempDir temp("ramsis-selection");
  const std::string cache = temp.File("cache");
  PolicyParams params("t", {{"min_qps", "50"},
                            {"max_qps", "100"},
                            {"d", "20"},
                            {"max_queue", "8"},
                            {"variants", "shufflenet_v2_x0_5,efficientnet_b2"},
                            {"cache_dir", cache}});
  auto created = RamsisSelection::Create(params);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto* ramsis = static_cast<RamsisSelection*>(created->get());
  PolicyContext ctx;
  ctx.suite = suite;
  ctx.workers = MakeWorkers(10, suite->variants().size());
  ctx.slo = Millis(150);
  std::vector<OfflineJob> offline;  // the test plays the driver: it decides when jobs run
  ctx.submit_offline = [&](OfflineJob job) { offline.push_back(std::move(job)); };
  ASSERT_TRUE(ramsis->Init(ctx).ok());
  const size_t initial = ramsis->policies().size();
  ASSERT_GE(initial, 1u);
  EXPECT_LE(ramsis->policies().back().load_qps(), 100.0 + 1e-9);

  // 400 qps for a second: beyond every policy.
  TimePoint t = kTimeZero;
  for (int i = 0; i < 400; ++i) ramsis->OnArrival(Query{}, t += Micros(2500));
  QueueFixture q;
  q.Add(0, 150);
  SelectionDecision first = ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
  EXPECT_EQ(suite->variants()[first.variant].name, "shufflenet_v2_x0_5");  // fastest meanwhile
  ASSERT_EQ(offline.size(), 1u);  // one generation requested ...
  EXPECT_FALSE(offline[0].what.empty());
  ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
  EXPECT_EQ(offline.size(), 1u);  // ... and not twice while in flight
  // The work runs (off the engine thread in serve) and hands back its publish step; until
  // the driver runs that step the set is unchanged and nothing new is requested.
  std::function<void()> publish = offline[0].work();
  ASSERT_TRUE(publish);
  ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
  EXPECT_EQ(ramsis->policies().size(), initial);
  EXPECT_EQ(offline.size(), 1u);
  publish();  // on the engine thread, as an event
  ASSERT_EQ(ramsis->policies().size(), initial + 1);
  EXPECT_GE(ramsis->policies().back().load_qps(), 400.0);
  // The next decision reads the new policy: no further job, and the set stays sorted.
  ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
  EXPECT_EQ(offline.size(), 1u);
  for (size_t i = 1; i < ramsis->policies().size(); ++i) {
    EXPECT_LT(ramsis->policies()[i - 1].load_qps(), ramsis->policies()[i].load_qps());
  }
}

// A RAMSIS selection with a small policy set (50-100 qps, two variants) for `workers`
// workers; offline jobs are collected in `offline`.
std::unique_ptr<SelectionPolicy> SmallRamsis(const ProfileSuite* suite, const std::string& cache,
                                             int workers, std::vector<OfflineJob>* offline,
                                             PolicyContext* ctx,
                                             std::map<std::string, std::string> extra = {}) {
  std::map<std::string, std::string> opts = {{"min_qps", "50"},
                                             {"max_qps", "100"},
                                             {"d", "20"},
                                             {"max_queue", "8"},
                                             {"variants", "shufflenet_v2_x0_5,efficientnet_b2"},
                                             {"cache_dir", cache}};
  for (auto& [k, v] : extra) opts[k] = v;
  auto created = RamsisSelection::Create(PolicyParams("t", opts));
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  ctx->suite = suite;
  ctx->workers = MakeWorkers(workers, suite->variants().size());
  ctx->slo = Millis(150);
  ctx->submit_offline = [offline](OfflineJob job) { offline->push_back(std::move(job)); };
  Status st = (*created)->Init(*ctx);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return *std::move(created);
}

TEST(RamsisSelectionTest, AStalePublishStepIsHarmless) {
  static const ProfileSuite* suite = &testing::EmbeddedSuite("ramsis-image");
  const testing::ScopedTempDir temp("ramsis-stale");
  std::vector<OfflineJob> offline;
  PolicyContext ctx;
  auto policy = SmallRamsis(suite, temp.File("cache"), 10, &offline, &ctx);
  auto* ramsis = static_cast<RamsisSelection*>(policy.get());
  TimePoint t = kTimeZero;
  for (int i = 0; i < 400; ++i) ramsis->OnArrival(Query{}, t += Micros(2500));
  QueueFixture q;
  q.Add(0, 150);
  ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
  ASSERT_EQ(offline.size(), 1u);
  // Re-initialised while the job was out: its publish step finds its set gone and does
  // nothing; the fresh set asks for its own policy.
  std::function<void()> stale = offline[0].work();
  ASSERT_TRUE(ramsis->Init(ctx).ok());
  const size_t initial = ramsis->policies().size();
  stale();
  EXPECT_EQ(ramsis->policies().size(), initial);
  for (int i = 0; i < 400; ++i) ramsis->OnArrival(Query{}, t += Micros(2500));
  ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
  EXPECT_EQ(offline.size(), 2u);
  // And a publish step that outlives the policy does nothing either.
  std::function<void()> orphan = offline[1].work();
  policy.reset();
  orphan();
}

// A default range starts at 1% of the deployment's peak; a load well below it gets a
// policy of its own (the range's lowest assumes a load the deployment does not have),
// and an explicit min_qps is kept as given.
TEST(RamsisSelectionTest, ADefaultRangeGrowsDownwardToALoadFarBelowIt) {
  static const ProfileSuite* suite = &testing::EmbeddedSuite("ramsis-image");
  const testing::ScopedTempDir temp("ramsis-below");
  for (const char* min_qps : {"0", "20"}) {
    SCOPED_TRACE(std::string("min_qps ") + min_qps);
    std::vector<OfflineJob> offline;
    PolicyContext ctx;
    auto policy = SmallRamsis(suite, temp.File("cache"), 10, &offline, &ctx,
                              {{"min_qps", min_qps}, {"max_qps", "2000"}, {"window_ms", "2000"}});
    auto* ramsis = static_cast<RamsisSelection*>(policy.get());
    const size_t initial = ramsis->policies().size();
    ASSERT_GE(initial, 1u);
    EXPECT_NEAR(ramsis->policies().front().load_qps(), 20.0, 1e-9);  // 1% of 2,000 either way
    // 5 qps for 4 s: a quarter of the lowest policy's load.
    TimePoint t = kTimeZero;
    for (int i = 0; i < 20; ++i) ramsis->OnArrival(Query{}, t += Millis(200));
    QueueFixture q;
    q.Add(0, 150);
    ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
    if (std::string(min_qps) == "20") {
      EXPECT_TRUE(offline.empty());
      continue;
    }
    ASSERT_EQ(offline.size(), 1u);
    offline[0].work()();
    ASSERT_EQ(ramsis->policies().size(), initial + 1);
    EXPECT_NEAR(ramsis->policies().front().load_qps(), 5.5, 1e-9);  // the load, 10% headroom
    // Covered now (5.5 >= 5, not more than 2x): nothing more is asked for.
    ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
    EXPECT_EQ(offline.size(), 1u);
    // 12 qps: the 20-qps policy covers it within 2x: nothing either.
    for (int i = 0; i < 24; ++i) ramsis->OnArrival(Query{}, t += Micros(83'333));
    ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
    EXPECT_EQ(offline.size(), 1u);
  }
}

TEST(RamsisSelectionTest, WorkersAddedAfterInitServeTheFirstClass) {
  static const ProfileSuite* suite = &testing::EmbeddedSuite("ramsis-image");
  const testing::ScopedTempDir temp("ramsis-added");
  std::vector<OfflineJob> offline;
  PolicyContext ctx;
  auto policy =
      SmallRamsis(suite, temp.File("cache"), 4, &offline, &ctx, {{"slo_workers", "150:2,300:2"}});
  auto* ramsis = static_cast<RamsisSelection*>(policy.get());
  TimePoint t = kTimeZero;
  // 60 qps of 150 ms queries (class 0) only: a load its set covers.
  for (int i = 0; i < 60; ++i) {
    Query a;
    a.deadline = a.arrival + Millis(150);
    ramsis->OnArrival(a, t += Micros(16667));
  }
  QueueFixture q;
  q.Add(0, 150);
  const WorkerView added = testing::AddedWorker(ctx.workers[3], 4 + 3);  // id n+3
  const SelectionDecision on_added = ramsis->Choose(added, q.View(), q.View().at(0), t);
  const SelectionDecision on_first = ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t);
  EXPECT_NE(on_added.variant, kNoId);
  EXPECT_GT(on_added.max_rows, 0);
  EXPECT_EQ(on_added.variant, on_first.variant);  // the first class's policy, same state
  EXPECT_EQ(on_added.max_rows, on_first.max_rows);
  EXPECT_TRUE(offline.empty());
}

// A plan leaving 5 of the 10 workers the MDP was generated for: the measured load is
// looked up as twice as much per worker, so 60 qps (inside the 50-100 qps set) reads as
// 120 qps, beyond it: a generation is asked for and the fastest variant serves meanwhile.
TEST(RamsisSelectionTest, TheLoadIsScaledToTheWorkersTheMdpWasGeneratedFor) {
  static const ProfileSuite* suite = &testing::EmbeddedSuite("ramsis-image");
  const testing::ScopedTempDir temp("ramsis-scaled");
  std::vector<OfflineJob> offline;
  PolicyContext ctx;
  auto policy = SmallRamsis(suite, temp.File("cache"), 10, &offline, &ctx);
  auto* ramsis = static_cast<RamsisSelection*>(policy.get());
  EXPECT_EQ(ramsis->mdp_workers(), 10);
  std::vector<WorkerView> workers = ctx.workers;
  ramsis->OnWorkersChanged(workers);
  EXPECT_DOUBLE_EQ(ramsis->load_scale(), 1.0);
  TimePoint t = kTimeZero;
  for (int i = 0; i < 120; ++i) ramsis->OnArrival(Query{}, t += Micros(16667));  // 60 qps
  QueueFixture q;
  q.Add(0, 150);
  ramsis->Choose(workers[0], q.View(), q.View().at(0), t);
  EXPECT_TRUE(offline.empty());  // covered
  for (size_t w = 5; w < 10; ++w) workers[w].active = false;
  ramsis->OnWorkersChanged(workers);
  EXPECT_DOUBLE_EQ(ramsis->load_scale(), 2.0);
  const SelectionDecision d = ramsis->Choose(workers[0], q.View(), q.View().at(0), t);
  EXPECT_EQ(suite->variants()[d.variant].name, "shufflenet_v2_x0_5");  // the fastest
  ASSERT_EQ(offline.size(), 1u);
  // Back to all ten: covered again, nothing more asked for.
  for (WorkerView& w : workers) w.active = true;
  ramsis->OnWorkersChanged(workers);
  EXPECT_DOUBLE_EQ(ramsis->load_scale(), 1.0);
  ramsis->Choose(workers[0], q.View(), q.View().at(0), t);
  EXPECT_EQ(offline.size(), 1u);
}

// On a multi-model pool the MDP is generated for the workers serving the model: one of the
// four is dedicated to the other model. Dedicating another later scales the load by 3 / 2.
TEST(RamsisSelectionTest, OnAMultiModelPoolTheMdpIsForTheWorkersServingItsModel) {
  const ProfileSuite suite = testing::MultiModelSuite();
  const testing::ScopedTempDir temp("ramsis-multi");
  auto created = RamsisSelection::Create(PolicyParams(
      "t", {{"load_qps", "20"}, {"d", "10"}, {"max_queue", "4"}, {"cache_dir", temp.File("c")}}));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto* ramsis = static_cast<RamsisSelection*>(created->get());
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.task = 0;  // image
  ctx.slo = Millis(100);
  ctx.workers = MakeWorkers(4, suite.variants().size());
  ctx.workers[0].model = 1;  // text
  ASSERT_TRUE(ramsis->Init(ctx).ok());
  EXPECT_EQ(ramsis->mdp_workers(), 3);
  std::vector<WorkerView> workers = ctx.workers;
  workers[1].model = 1;
  ramsis->OnWorkersChanged(workers);
  EXPECT_DOUBLE_EQ(ramsis->load_scale(), 1.5);
}

// Selection over the loaded set: one model with four variants on one type (constant
// latencies at batch b: a 5 + 1(b-1) ms, 60%; b 10 + 2(b-1) ms, 70%; c 20 + 3(b-1) ms,
// 80%; d 40 + 5(b-1) ms, 90%), SLO 200 ms, two workers, a light load (5 queries/s). With
// one query queued and its whole SLO ahead, the MDP runs the most accurate variant it may:
// d over all four; once a plan's workers hold only a and c, never b or d: the fastest held
// (a) until the set over {a, c} is published, then c.
TEST(RamsisSelectionTest, ChoosesAmongTheVariantsThePlanLoaded) {
  ProfileSuite suite;
  suite.set_name("four-variants");
  TaskSpec task;
  task.name = "m";
  task.default_slo = Millis(200);
  const TaskId m = suite.AddTask(task);
  const HardwareId hw = suite.AddHardware(HardwareSpec{"hw", 1.0, 4, 16});
  struct Spec {
    const char* name;
    double accuracy, ms, per_row;
  };
  std::map<std::string, VariantId> v;
  for (const Spec& x :
       {Spec{"a", 60, 5, 1}, Spec{"b", 70, 10, 2}, Spec{"c", 80, 20, 3}, Spec{"d", 90, 40, 5}}) {
    v[x.name] = suite.AddVariant(VariantSpec{x.name, m, x.accuracy, 0, Duration(0)});
    for (int b = 1; b <= 4; ++b) {
      const auto us = static_cast<int64_t>((x.ms + x.per_row * (b - 1)) * 1000);
      suite.AddLatency(hw, v[x.name], b, LatencyDistribution(std::vector<int64_t>(5, us)));
    }
  }
  const testing::ScopedTempDir temp("ramsis-loaded");
  auto created = RamsisSelection::Create(PolicyParams("t", {{"min_qps", "1"},
                                                            {"max_qps", "20"},
                                                            {"d", "20"},
                                                            {"max_queue", "4"},
                                                            {"cache_dir", temp.File("cache")}}));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto* ramsis = static_cast<RamsisSelection*>(created->get());
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.slo = Millis(200);
  ctx.workers = MakeWorkers(2, suite.variants().size());
  std::vector<OfflineJob> offline;
  ctx.submit_offline = [&](OfflineJob job) { offline.push_back(std::move(job)); };
  ASSERT_TRUE(ramsis->Init(ctx).ok());
  TimePoint t = kTimeZero;
  for (int i = 0; i < 10; ++i) ramsis->OnArrival(Query{}, t += Millis(200));  // 5 qps
  QueueFixture q;
  q.Add(ToMillis(t - kTimeZero), 200);
  auto choose = [&] { return ramsis->Choose(ctx.workers[0], q.View(), q.View().at(0), t).variant; };
  EXPECT_EQ(choose(), v["d"]);  // every variant: the most accurate

  // A plan: both workers dedicated to the model, holding a and c.
  std::vector<WorkerView> workers = ctx.workers;
  for (WorkerView& w : workers) {
    w.model = m;
    w.residency[v["a"]] = w.residency[v["c"]] = Residency::kReady;
  }
  ramsis->OnWorkersChanged(workers);
  EXPECT_EQ(ramsis->variant_set(), (std::vector<VariantId>{v["a"], v["c"]}));
  ASSERT_EQ(offline.size(), 1u);
  EXPECT_EQ(choose(), v["a"]);  // d is not held: the fastest held until the set is ready
  ramsis->OnWorkersChanged(workers);
  EXPECT_EQ(offline.size(), 1u);  // the same set: asked for once
  std::function<void()> publish = offline[0].work();
  EXPECT_EQ(choose(), v["a"]);  // generated, not yet published
  publish();
  EXPECT_EQ(choose(), v["c"]);  // the most accurate held
  for (const mdp::Policy& p : ramsis->policies()) {
    for (int queued = 1; queued <= 4; ++queued) {
      for (int slack_ms : {10, 50, 200}) {
        const VariantId chosen = p.Decide(queued, Millis(slack_ms)).variant;
        if (chosen != kNoId) {
          EXPECT_TRUE(chosen == v["a"] || chosen == v["c"]) << chosen;
        }
      }
    }
  }
  // All four held again: the first set, at once; and back to {a, c}: cached, no new job.
  for (WorkerView& w : workers) w.residency.assign(suite.variants().size(), Residency::kReady);
  ramsis->OnWorkersChanged(workers);
  EXPECT_TRUE(ramsis->variant_set().empty());
  EXPECT_EQ(choose(), v["d"]);
  for (WorkerView& w : workers) w.residency[v["b"]] = w.residency[v["d"]] = Residency::kAbsent;
  ramsis->OnWorkersChanged(workers);
  EXPECT_EQ(choose(), v["c"]);
  EXPECT_EQ(offline.size(), 1u);
  // b and d to be prefetched (WorkerPlan::prefetch, not sent yet) count as held: the set
  // is all four again (the first set), no job for a set on the way to it.
  for (WorkerView& w : workers) w.prefetch = {v["b"], v["d"]};
  ramsis->OnWorkersChanged(workers);
  EXPECT_TRUE(ramsis->variant_set().empty());
  EXPECT_EQ(offline.size(), 1u);
}

}  // namespace
}  // namespace sloserve

#include "sloserve/engine/admission.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "sloserve/engine/engine.h"
#include "sloserve/policy/policy_spec.h"
#include "support/engine_fixtures.h"
#include "support/puppet_executor.h"
#include "support/test_suite.h"
#include "support/virtual_run.h"

namespace sloserve {
namespace {

using testing::At;
using testing::Policies;
using testing::PuppetExecutor;
using testing::VirtualRun;
using testing::Workers;

TEST(AdmissionControlTest, CapacityIsTheBestBatchWithinHalfTheSlo) {
  // SmallSuite: "fast" takes 10 + 2 (b - 1) ms for b = 1..8; with SLO 100 ms every
  // batch fits in 50 ms and b = 8 (24 ms) gives the most rows per second.
  ProfileSuite suite = testing::SmallSuite();
  AdmissionControl a(suite, 0, Millis(100), AdmissionOptions{true, 0, 1.0});
  a.SetActiveWorkers({{0, 0}, {1, 0}});
  EXPECT_NEAR(a.capacity_rows_per_s(), 2 * 8 / 0.024, 1e-6);
  EXPECT_EQ(a.batch_time(), Millis(24));
  EXPECT_EQ(a.max_queued_rows(), 67);  // ceil(666.7 rows/s x 0.1 s)
  // 20 rows ahead: 21 / 666.7 s = 31.5 ms + 24 ms fits in 100 ms; 60 rows do not.
  EXPECT_TRUE(a.Admit(20, 1, kTimeZero, kTimeZero + Millis(100)));
  EXPECT_FALSE(a.Admit(60, 1, kTimeZero, kTimeZero + Millis(100)));
  EXPECT_FALSE(a.Admit(20, 1, kTimeZero, kTimeZero + Millis(40)));    // its own deadline
  EXPECT_FALSE(a.Admit(67, 1, kTimeZero, kTimeZero + Seconds(100)));  // the bound
  // A query whose deadline is nearer than the fastest single row (10 ms) has expired.
  EXPECT_TRUE(a.Expired(kTimeZero + Millis(9), kTimeZero));
  EXPECT_FALSE(a.Expired(kTimeZero + Millis(10), kTimeZero));
  // Disabled admits everything.
  AdmissionControl off(suite, 0, Millis(100), AdmissionOptions{});
  off.SetActiveWorkers({{0, 0}});
  EXPECT_TRUE(off.Admit(1'000'000, 1, kTimeZero, kTimeZero));
}

TEST(AdmissionControlTest, CapacityFollowsThePolicysBatches) {
  ProfileSuite suite = testing::SmallSuite();
  AdmissionControl a(suite, 0, Millis(100), AdmissionOptions{true, 0, 1.0});
  a.SetActiveWorkers({{0, 0}});
  const double start = a.capacity_rows_per_s();
  // The policy keeps running single rows of the slow variant (30 ms): 33 rows/s.
  for (int i = 0; i < 200; ++i) a.OnBatch(0, 1, Millis(30));
  EXPECT_NEAR(a.capacity_rows_per_s(), 1 / 0.030, 0.5);
  EXPECT_LT(a.capacity_rows_per_s(), start);
  // A configured bound replaces capacity x SLO.
  AdmissionControl fixed(suite, 0, Millis(100), AdmissionOptions{true, 5, 1.0});
  fixed.SetActiveWorkers({{0, 0}});
  EXPECT_EQ(fixed.max_queued_rows(), 5);
}

TEST(AdmissionControlTest, ALoadFollowingSelectionKeepsTheProfilesCapacityAsAFloor) {
  // A selection that follows the load ran slow single rows while load was light; when
  // load steps up it switches to fast batches, so the light-load rate must not shed the
  // step: capacity stays at the profile's best, while a fixed variant's falls.
  ProfileSuite suite = testing::SmallSuite();
  AdmissionControl follows(suite, 0, Millis(100), AdmissionOptions{true, 0, 1.0}, true);
  AdmissionControl fixed(suite, 0, Millis(100), AdmissionOptions{true, 0, 1.0}, false);
  for (AdmissionControl* a : {&follows, &fixed}) {
    a->SetActiveWorkers({{0, 0}});
    for (int i = 0; i < 200; ++i) a->OnBatch(0, 1, Millis(30));
  }
  EXPECT_NEAR(follows.capacity_rows_per_s(), 8 / 0.024, 1e-6);
  EXPECT_EQ(follows.batch_time(), Millis(24));
  EXPECT_NEAR(fixed.capacity_rows_per_s(), 1 / 0.030, 0.5);
  // Faster batches than the floor still count.
  for (int i = 0; i < 200; ++i) follows.OnBatch(0, 20, Millis(20));
  EXPECT_GT(follows.capacity_rows_per_s(), 8 / 0.024 + 100);
}

TEST(AdmissionControlTest, PolicySetSaysWhetherItsSelectionFollowsTheLoad) {
  for (const auto& [selection, follows] :
       std::vector<std::pair<std::string, bool>>{{"fixed", false}, {"jellyfish_plus", true}}) {
    PolicySpec spec;
    spec.dispatch = "round_robin";
    spec.batching = "edf";
    spec.selection = selection;
    auto set = MakePolicySet(spec);
    ASSERT_TRUE(set.ok()) << set.status().message();
    EXPECT_EQ(set->variant_follows_load, follows) << selection;
  }
}

TEST(AdmissionControlTest, AQueryTooTightForTheBatchesIsNotShedAsOverload) {
  // Batches priced at 24 ms (the profile's best within half the 100 ms SLO). A query with
  // 20 ms to its deadline misses with no queue at all: that is no overload (a retry would
  // not help), so rule 1 admits it and its batch decides (rule 3).
  ProfileSuite suite = testing::SmallSuite();
  AdmissionControl fixed(suite, 0, Millis(100), AdmissionOptions{true, 0, 1.0}, false);
  fixed.SetActiveWorkers({{0, 0}});
  EXPECT_TRUE(fixed.Admit(0, 1, kTimeZero, kTimeZero + Millis(20)));
  EXPECT_TRUE(fixed.Admit(5, 1, kTimeZero, kTimeZero + Millis(20)));
  EXPECT_FALSE(fixed.Admit(67, 1, kTimeZero, kTimeZero + Millis(20)));  // the bound still holds
  // A selection that follows the load serves such a query from a faster variant: its batch
  // is priced in proportion to its time (24 ms x 20/100, at least the fastest row's 10 ms),
  // so the wait behind the queue still sheds it under load.
  AdmissionControl follows(suite, 0, Millis(100), AdmissionOptions{true, 0, 1.0}, true);
  follows.SetActiveWorkers({{0, 0}});
  EXPECT_TRUE(follows.Admit(0, 1, kTimeZero, kTimeZero + Millis(20)));   // 3 ms + 10 <= 20
  EXPECT_FALSE(follows.Admit(5, 1, kTimeZero, kTimeZero + Millis(20)));  // 18 ms + 10 > 20
  // At the SLO itself the price is the batches' own.
  EXPECT_TRUE(follows.Admit(20, 1, kTimeZero, kTimeZero + Millis(100)));
  EXPECT_FALSE(follows.Admit(26, 1, kTimeZero, kTimeZero + Millis(100)));  // 81 + 24 > 100
}

TEST(EngineAdmissionTest, AnIdleDeploymentServesATightSloItsVariantMeets) {
  // The deployment's SLO is 100 ms; a request asks for 20 ms. Served by "fast" (10 ms) it
  // is met; served by "slow" (30 ms) it is dropped before it runs (expired), not shed.
  for (const char* variant : {"fast", "slow"}) {
    SCOPED_TRACE(variant);
    ProfileSuite suite = testing::SmallSuite();
    PuppetExecutor exec;
    EngineOptions opts;
    opts.admission.enabled = true;
    opts.slo = Millis(100);
    auto engine = Engine::Create(
        &suite, Workers(1), Policies("round_robin", "edf", {{"variant", variant}}), &exec, opts, 1);
    ASSERT_TRUE(engine.ok());
    Engine& e = **engine;
    std::vector<QueryRecord> done;
    e.set_sink([&](const QueryRecord& r) { done.push_back(r); });
    e.Submit(At(kTimeZero, Millis(20)), kTimeZero);
    if (std::string(variant) == "fast") {
      ASSERT_EQ(exec.sent.size(), 1u);
      exec.Answer(e, 0, AtMicros(10000));
      ASSERT_EQ(done.size(), 1u);
      EXPECT_TRUE(done[0].met_slo);
    } else {
      EXPECT_TRUE(exec.sent.empty());
      ASSERT_EQ(done.size(), 1u);
      EXPECT_TRUE(done[0].dropped);
      EXPECT_EQ(done[0].drop_reason, DropReason::kExpired);
    }
  }
}

// The engine at `load` x its capacity in virtual time (Poisson). With `mixed`, every
// other query asks for priority 2 (low) and the rest for 1 (high).
MetricsSummary Overload(bool admission, std::map<QueryId, int>* ended, double load = 3,
                        bool mixed = false) {
  ProfileSuite suite = testing::SmallSuite();
  EngineOptions opts;
  opts.admission.enabled = admission;
  opts.slo = Millis(100);
  VirtualRun run;
  EXPECT_TRUE(run.Start(&suite, Workers(2), Policies("round_robin", "edf", {{"variant", "fast"}}),
                        nullptr, opts, 3)
                  .ok());
  Engine& e = run.engine();
  e.set_sink([&](const QueryRecord& r) { ++(*ended)[r.id]; });
  std::mt19937_64 rng(5);
  std::exponential_distribution<double> gap(load * 2 * 8 / 0.024);
  TimePoint now = kTimeZero;
  for (int i = 0; i < 20000; ++i) {
    now += Micros(static_cast<int64_t>(gap(rng) * 1e6));
    Query q = At(now, Millis(100));
    if (mixed) q.priority = 1 + i % 2;
    run.Submit(q, now);
  }
  run.RunToEnd();
  EXPECT_EQ(e.in_system(), 0u);
  return e.Summarize(run.now());
}

TEST(EngineAdmissionTest, ShedsOverloadSoAdmittedQueriesMeetTheSlo) {
  std::map<QueryId, int> ended_off, ended_on;
  const MetricsSummary off = Overload(false, &ended_off);
  const MetricsSummary on = Overload(true, &ended_on);
  for (const auto* ended : {&ended_off, &ended_on}) {
    ASSERT_EQ(ended->size(), 20000u);
    for (const auto& [id, n] : *ended) EXPECT_EQ(n, 1) << "query " << id;
  }
  EXPECT_EQ(off.shed, 0);
  EXPECT_LT(off.admitted_met_rate, 0.2);  // the backlog makes nearly everything late
  EXPECT_GT(on.shed, 10000);              // about two thirds of the offered load
  EXPECT_EQ(on.admitted, on.arrived - on.shed);
  EXPECT_GE(on.admitted_met_rate, 0.9);
  EXPECT_LE(on.p99_ms, 100.0);
  EXPECT_GT(on.met, 5 * off.met);
  EXPECT_EQ(on.dropped, on.shed + on.expired);
}

TEST(EngineAdmissionTest, ExpiredQueriesAreDroppedBeforeTheyRun) {
  ProfileSuite suite = testing::SmallSuite();
  PuppetExecutor exec;
  EngineOptions opts;
  opts.admission.enabled = true;
  opts.admission.max_queued_rows = 100;
  opts.admission.target = 1.0;
  opts.slo = Millis(100);
  auto engine = Engine::Create(
      &suite, Workers(1), Policies("round_robin", "edf", {{"variant", "fast"}}), &exec, opts, 1);
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  std::vector<QueryRecord> done;
  e.set_sink([&](const QueryRecord& r) { done.push_back(r); });
  e.Submit(At(kTimeZero, Millis(100)), kTimeZero);      // runs at once (10 ms)
  e.Submit(At(AtMicros(1), Millis(40)), AtMicros(1));   // admitted, but waits 60 ms
  e.Submit(At(AtMicros(2), Millis(100)), AtMicros(2));  // admitted, still feasible
  ASSERT_EQ(exec.sent.size(), 1u);
  exec.Answer(e, 0, AtMicros(60000));
  ASSERT_EQ(done.size(), 2u);
  EXPECT_TRUE(done[0].met_slo);
  EXPECT_TRUE(done[1].dropped);
  EXPECT_EQ(done[1].drop_reason, DropReason::kExpired);
  ASSERT_EQ(exec.sent.size(), 2u);  // the third runs alone
  EXPECT_EQ(exec.sent[1].ids, (std::vector<QueryId>{3}));
}

TEST(EngineAdmissionTest, CancelDropsAQueuedQueryOnly) {
  ProfileSuite suite = testing::SmallSuite();
  PuppetExecutor exec;
  auto engine = Engine::Create(&suite, Workers(1),
                               Policies("round_robin", "edf", {{"variant", "fast"}}), &exec, {}, 1);
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  std::vector<QueryRecord> done;
  e.set_sink([&](const QueryRecord& r) { done.push_back(r); });
  const QueryId running = e.Submit(At(kTimeZero, Millis(100)), kTimeZero);
  const QueryId queued = e.Submit(At(AtMicros(1), Millis(100)), AtMicros(1));
  EXPECT_FALSE(e.Cancel(running, AtMicros(2)));  // in a batch: it finishes
  EXPECT_TRUE(e.Cancel(queued, AtMicros(2)));
  EXPECT_FALSE(e.Cancel(queued, AtMicros(3)));  // already gone
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].id, queued);
  EXPECT_EQ(done[0].drop_reason, DropReason::kCancelled);
  EXPECT_EQ(e.workers()[0].queue_length, 0u);
  exec.Answer(e, 0, AtMicros(10000));
  ASSERT_EQ(done.size(), 2u);
  EXPECT_TRUE(done[1].met_slo);
  EXPECT_EQ(e.Summarize(AtMicros(10000)).cancelled, 1);
}

TEST(AdmissionControlTest, LowerPrioritiesGetAShareOfTheQueue) {
  // Capacity 666.7 rows/s, bound 67 rows, batch 24 ms (first test); 2 levels: level 2 may
  // use half the bound (34 rows) and half the wait (0.75 x 100 ms - 24 ms = 51 ms).
  ProfileSuite suite = testing::SmallSuite();
  AdmissionControl a(suite, 0, Millis(100), AdmissionOptions{true, 0, 0.75, 2, 1});
  a.SetActiveWorkers({{0, 0}, {1, 0}});
  const TimePoint deadline = kTimeZero + Millis(100);
  EXPECT_TRUE(a.Admit(0, 1, kTimeZero, deadline, 2));    // an idle deployment takes both
  EXPECT_TRUE(a.Admit(15, 1, kTimeZero, deadline, 2));   // 24 ms of wait: within 25.5
  EXPECT_FALSE(a.Admit(20, 1, kTimeZero, deadline, 2));  // 31.5 ms: only the high class
  EXPECT_TRUE(a.Admit(20, 1, kTimeZero, deadline, 1));
  EXPECT_FALSE(a.Admit(34, 1, kTimeZero + Seconds(0), kTimeZero + Seconds(100), 2));  // bound
  EXPECT_TRUE(a.Admit(34, 1, kTimeZero, kTimeZero + Seconds(100), 1));
  EXPECT_EQ(a.Level(0), 1);  // the default
  EXPECT_EQ(a.Level(2), 2);
  EXPECT_EQ(a.Level(9), 2);  // beyond the levels: the lowest
  AdmissionControl low_default(suite, 0, Millis(100), AdmissionOptions{true, 0, 0.75, 3, 2});
  EXPECT_EQ(low_default.Level(0), 2);
}

TEST(AdmissionControlTest, PriorityLevelsAreRangeChecked) {
  EXPECT_TRUE(ValidatePriorityLevels(2, 1).ok());
  EXPECT_TRUE(ValidatePriorityLevels(kMaxPriorityLevels, kMaxPriorityLevels).ok());
  const Status none = ValidatePriorityLevels(0, 1);
  EXPECT_NE(none.message().find("'engine.priority_levels': must be 1..16, got 0"),
            std::string::npos)
      << none.message();
  const Status high = ValidatePriorityLevels(3, 4);
  EXPECT_NE(high.message().find("'engine.priority_default': must be 1..3"), std::string::npos)
      << high.message();
  EXPECT_FALSE(ValidatePriorityLevels(17, 1).ok());
  ProfileSuite suite = testing::SmallSuite();
  PuppetExecutor exec;
  EngineOptions opts;
  opts.admission.priority_levels = 0;
  EXPECT_FALSE(Engine::Create(&suite, Workers(1),
                              Policies("round_robin", "edf", {{"variant", "fast"}}), &exec, opts, 1)
                   .ok());
}

TEST(EngineAdmissionTest, AtTwiceTheCapacityTheLowPriorityHalfIsShedFirst) {
  // 50/50 high/low at 2x: the high half alone is about the capacity, so it is admitted
  // and keeps meeting the SLO while the low half takes the shedding.
  std::map<QueryId, int> ended;
  const MetricsSummary m = Overload(true, &ended, 2, true);
  ASSERT_EQ(ended.size(), 20000u);
  ASSERT_EQ(m.priorities.size(), 2u);
  const PriorityStats& high = m.priorities[0];
  const PriorityStats& low = m.priorities[1];
  EXPECT_EQ(high.level, 1);
  EXPECT_EQ(low.level, 2);
  EXPECT_EQ(high.arrived + low.arrived, 20000);
  EXPECT_EQ(high.shed + low.shed, m.shed);
  EXPECT_GT(low.shed_rate, 0.5);                   // most of the low half
  EXPECT_LT(high.shed_rate, 0.2 * low.shed_rate);  // much less of the high half
  EXPECT_GE(high.admitted_met_rate, 0.9);
  EXPECT_GE(m.admitted_met_rate, 0.9);
  // Without priorities the same load is shed evenly: the classes are what differ.
  std::map<QueryId, int> ended_even;
  const MetricsSummary even = Overload(true, &ended_even, 2, false);
  EXPECT_TRUE(even.priorities.empty());
  EXPECT_GT(static_cast<double>(even.shed) / 20000, 2 * high.shed_rate);
}

TEST(EngineAdmissionTest, BelowCapacityNoClassIsShed) {
  std::map<QueryId, int> ended;
  const MetricsSummary m = Overload(true, &ended, 0.5, true);
  ASSERT_EQ(m.priorities.size(), 2u);
  EXPECT_EQ(m.priorities[0].shed, 0);
  EXPECT_LT(m.priorities[1].shed_rate, 0.01);
  EXPECT_GE(m.admitted_met_rate, 0.95);
}

// GET /metrics exports every configured level, also one no query ended in, with the two
// shed reasons apart (MetricsCollector::PriorityCounts); the summary lists only the
// levels seen.
TEST(EngineAdmissionTest, PriorityCountsCoverEveryLevelAndSplitTheShedReasons) {
  MetricsCollector c;
  auto done = [&](int32_t level, DropReason reason, bool met = false) {
    QueryRecord r;
    r.priority = level;
    r.dropped = reason != DropReason::kNone;
    r.drop_reason = reason;
    r.met_slo = met;
    c.OnDone(r, 0);
  };
  done(1, DropReason::kNone, true);
  done(1, DropReason::kNone, false);
  done(2, DropReason::kShed);
  done(2, DropReason::kShed);
  done(2, DropReason::kQueueFull);
  done(2, DropReason::kExpired);
  const std::vector<PriorityStats> levels = c.PriorityCounts(3);
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_EQ(levels[0].level, 1);
  EXPECT_EQ(levels[0].arrived, 2);
  EXPECT_EQ(levels[0].met, 1);
  EXPECT_EQ(levels[0].shed, 0);
  EXPECT_DOUBLE_EQ(levels[0].admitted_met_rate, 0.5);
  EXPECT_EQ(levels[1].level, 2);
  EXPECT_EQ(levels[1].arrived, 4);
  EXPECT_EQ(levels[1].shed, 3);  // both reasons; the expired one was admitted
  EXPECT_EQ(levels[1].queue_full, 1);
  EXPECT_DOUBLE_EQ(levels[1].shed_rate, 0.75);
  EXPECT_EQ(levels[2].level, 3);
  EXPECT_EQ(levels[2].arrived, 0);
  EXPECT_EQ(levels[2].shed, 0);
  const MetricsSummary m = c.Summarize(TimePoint(Seconds(1)), 1);
  ASSERT_EQ(m.priorities.size(), 2u);
  EXPECT_EQ(m.priorities[1].level, 2);
  EXPECT_EQ(m.priorities[1].queue_full, 1);
}

}  // namespace
}  // namespace sloserve

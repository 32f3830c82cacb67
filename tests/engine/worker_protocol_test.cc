// The engine's side of the worker protocol (worker_protocol.h, docs/architecture.md
// "Worker protocol", "Model lifecycle"): results that fail, come late, out of order,
// twice or for nothing; cold starts as Load results; memory per machine with LRU
// eviction; plans that add workers (serving only after their load result) and remove
// them (drain, retire, unload). The executor is a puppet: the test answers every action.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sloserve/engine/engine.h"
#include "sloserve/exec/profile_executor.h"
#include "support/engine_fixtures.h"
#include "support/puppet_executor.h"
#include "support/test_policies.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

using testing::FnPlanning;
using testing::PuppetExecutor;
using testing::RecordLog;
using testing::Workers;
using Kind = PuppetExecutor::Kind;

constexpr VariantId kFast = 0;  // SmallSuite: "fast" 10 ms, "slow" 30 ms at batch 1
constexpr VariantId kSlow = 1;

TimePoint Ms(int64_t ms) {
  return kTimeZero + Millis(ms);
}

Query Due(TimePoint deadline, AppId app = 0) {
  Query q;
  q.deadline = deadline;
  q.app = app;
  return q;
}

// Engine + puppet + record log; `warnings` keeps the engine's log lines (never stderr).
struct Rig {
  PuppetExecutor exec;
  RecordLog log;
  std::vector<std::string> warnings;
  std::unique_ptr<Engine> engine;

  Status Start(const ProfileSuite* suite, std::vector<WorkerSpec> workers, PolicySet set,
               EngineOptions opts = {}) {
    opts.log = [this](const std::string& line) { warnings.push_back(line); };
    auto e = Engine::Create(suite, std::move(workers), std::move(set), &exec, std::move(opts), 1);
    if (!e.ok()) return e.status();
    engine = std::move(e).value();
    engine->set_sink(log.Sink());
    return OkStatus();
  }
  Engine& e() { return *engine; }
  const PuppetExecutor::Sent& Only(Kind kind, WorkerId w = kNoId) {
    const std::vector<size_t> idx = exec.Of(kind, w);
    EXPECT_EQ(idx.size(), 1u);
    return exec.sent.at(idx.empty() ? 0 : idx.back());
  }
};

// Dispatch by app (app k -> worker k), batches of up to 4 from the front on `v`.
PolicySet ByApp(VariantId v, size_t max = 4) {
  return testing::MakeSet(
      testing::Route([](const Query& q, const std::vector<WorkerView>&) { return q.app; }),
      testing::TakeFront(max, v));
}

// ---------------------------------------------------------------- failed results

TEST(WorkerProtocolTest, FailedBatchRequeuesOnceThenDropsAsExecutorErrorOrExpired) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  ASSERT_TRUE(rig.Start(&suite, Workers(1), ByApp(kFast)).ok());
  Engine& e = rig.e();
  e.Submit(Due(Ms(100)), kTimeZero);    // q1 runs alone at once
  e.Submit(Due(Ms(100)), AtMicros(1));  // q2 queued
  e.Submit(Due(Ms(5)), AtMicros(2));    // q3 queued, earliest deadline
  ASSERT_EQ(rig.exec.Runs().size(), 1u);
  const PuppetExecutor::Sent& first = rig.exec.sent[0];
  EXPECT_EQ(first.ids, (std::vector<QueryId>{1}));
  EXPECT_EQ(first.earliest_start, kTimeZero);
  EXPECT_EQ(first.latest_start, Ms(100));  // the batch's latest deadline
  EXPECT_EQ(first.expected, Millis(10));   // the profile's median at batch 1
  EXPECT_EQ(e.actions_in_flight(), 1u);

  // The first failure re-queues q1 (attempt 1 of 2); the worker takes all three at once.
  rig.exec.Fail(e, 0, Ms(1));
  EXPECT_TRUE(rig.log.records.empty());
  EXPECT_EQ(e.counters().requeued, 1);
  EXPECT_EQ(e.counters().failed_results, 1);
  ASSERT_EQ(rig.exec.Runs().size(), 2u);
  EXPECT_EQ(rig.exec.sent[1].ids, (std::vector<QueryId>{3, 1, 2}));  // deadline order

  // The second: q3 is past its deadline (expired), q1 used its attempts (executor_error),
  // q2 failed for the first time and runs again.
  rig.exec.Fail(e, 1, Ms(10));
  ASSERT_EQ(rig.log.records.size(), 2u);
  ASSERT_NE(rig.log.Find(3), nullptr);
  EXPECT_EQ(rig.log.Find(3)->drop_reason, DropReason::kExpired);
  ASSERT_NE(rig.log.Find(1), nullptr);
  EXPECT_EQ(rig.log.Find(1)->drop_reason, DropReason::kExecutorError);
  EXPECT_EQ(rig.log.Find(1)->finish, Ms(10));
  ASSERT_EQ(rig.exec.Runs().size(), 3u);
  EXPECT_EQ(rig.exec.sent[2].ids, (std::vector<QueryId>{2}));

  rig.exec.Fail(e, 2, Ms(20));
  ASSERT_NE(rig.log.Find(2), nullptr);
  EXPECT_EQ(rig.log.Find(2)->drop_reason, DropReason::kExecutorError);
  EXPECT_TRUE(rig.log.EachEndedOnce(3));
  EXPECT_EQ(e.in_system(), 0u);
  EXPECT_EQ(e.actions_in_flight(), 0u);
  EXPECT_EQ(e.counters().failed_results, 3);
  EXPECT_EQ(e.counters().requeued, 2);
  EXPECT_FALSE(e.workers()[0].busy);
  EXPECT_FALSE(rig.warnings.empty());  // failures are logged
  const MetricsSummary m = e.Summarize(Ms(20));
  EXPECT_EQ(m.arrived, 3);
  EXPECT_EQ(m.dropped, 3);
  EXPECT_EQ(m.batches, 0);  // failed batches are no batches

  // A late duplicate of the last failure finishes nothing twice.
  rig.exec.Fail(e, 2, Ms(21));
  EXPECT_EQ(e.counters().stale_results, 1);
  EXPECT_EQ(rig.log.records.size(), 3u);
}

TEST(WorkerProtocolTest, OneAttemptDropsAtTheFirstFailure) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  EngineOptions opts;
  opts.max_attempts = 1;
  ASSERT_TRUE(rig.Start(&suite, Workers(1), ByApp(kFast), opts).ok());
  rig.e().Submit(Due(Ms(100)), kTimeZero);
  rig.exec.Fail(rig.e(), 0, Ms(1));
  ASSERT_EQ(rig.log.records.size(), 1u);
  EXPECT_EQ(rig.log.records[0].drop_reason, DropReason::kExecutorError);
  EXPECT_EQ(rig.e().counters().requeued, 0);
  EXPECT_EQ(rig.exec.sent.size(), 1u);
  // And the option is validated.
  Rig bad;
  opts.max_attempts = 0;
  EXPECT_FALSE(bad.Start(&suite, Workers(1), ByApp(kFast), opts).ok());
}

TEST(WorkerProtocolTest, CouldNotStartInItsWindowIsNotRetried) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  ASSERT_TRUE(rig.Start(&suite, Workers(1), ByApp(kFast)).ok());
  Engine& e = rig.e();
  e.Submit(Due(Ms(50)), kTimeZero);
  // The executor could not begin before the latest start: past the deadline = expired.
  rig.exec.Answer(e, 0, Ms(60), Status(StatusCode::kDeadlineExceeded, "missed its window"));
  ASSERT_EQ(rig.log.records.size(), 1u);
  EXPECT_EQ(rig.log.records[0].drop_reason, DropReason::kExpired);
  // Said before the deadline (an executor that knows it cannot make it): dropped at once
  // as executor_error, not retried.
  e.Submit(Due(Ms(200)), Ms(60));
  ASSERT_EQ(rig.exec.Runs().size(), 2u);
  rig.exec.Answer(e, 1, Ms(61), Status(StatusCode::kDeadlineExceeded, "cannot make it"));
  ASSERT_EQ(rig.log.records.size(), 2u);
  EXPECT_EQ(rig.log.records[1].drop_reason, DropReason::kExecutorError);
  EXPECT_EQ(e.counters().requeued, 0);
  EXPECT_EQ(e.in_system(), 0u);
}

// ---------------------------------------------------------------- late, out of order, stale

// serve's latency phases (metrics.h): queue = arrival -> batch formed, exec = the
// executor's begin -> end, handoff = the rest of the engine's service time.
TEST(WorkerProtocolTest, TheExecutorsMeasureSplitsServiceIntoExecAndHandoff) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  EngineOptions opts;
  opts.latency_phases = true;
  ASSERT_TRUE(rig.Start(&suite, Workers(1), ByApp(kFast), opts).ok());
  Engine& e = rig.e();
  e.Submit(Due(Ms(100)), kTimeZero);  // q1 runs at once
  e.Submit(Due(Ms(100)), Ms(1));      // q2 waits for the worker
  ASSERT_EQ(rig.exec.Runs().size(), 1u);
  // Ran from 2 to 9 ms by the executor's clock, handled by the engine at 10 ms.
  e.OnResult(rig.exec.Result(0, OkStatus(), Ms(2), Ms(9)), Ms(10));
  ASSERT_EQ(rig.exec.Runs().size(), 2u);
  // An executor whose measure exceeds what the engine saw counts no negative handoff.
  e.OnResult(rig.exec.Result(1, OkStatus(), Ms(10), Ms(20)), Ms(15));
  ASSERT_NE(rig.log.Find(1), nullptr);
  ASSERT_NE(rig.log.Find(2), nullptr);
  EXPECT_EQ(rig.log.Find(1)->exec_time, Millis(7));
  EXPECT_EQ(rig.log.Find(1)->service_time(), Millis(10));
  EXPECT_EQ(rig.log.Find(2)->queue_time(), Millis(9));
  EXPECT_EQ(rig.log.Find(2)->exec_time, Millis(5));  // clamped to its service

  const LatencyPhases p = e.metrics().Phases();
  EXPECT_EQ(p.count, 2);
  EXPECT_DOUBLE_EQ(p.queue.mean_ms, 4.5);
  EXPECT_DOUBLE_EQ(p.queue.max_ms, 9.0);
  EXPECT_DOUBLE_EQ(p.exec.mean_ms, 6.0);
  EXPECT_DOUBLE_EQ(p.exec.max_ms, 7.0);
  EXPECT_DOUBLE_EQ(p.handoff.mean_ms, 1.5);
  EXPECT_DOUBLE_EQ(p.handoff.max_ms, 3.0);
  // The summaries a live server publishes every step do not carry them.
  EXPECT_EQ(e.Summarize(Ms(15)).phases.count, 0);
}

TEST(WorkerProtocolTest, PhasesAreKeptOnlyWhenAskedForAndOnlyWhenMeasured) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  ASSERT_TRUE(rig.Start(&suite, Workers(1), ByApp(kFast)).ok());
  Engine& e = rig.e();
  e.Submit(Due(Ms(100)), kTimeZero);
  e.OnResult(rig.exec.Result(0, OkStatus(), Ms(1), Ms(4)), Ms(5));
  ASSERT_NE(rig.log.Find(1), nullptr);
  EXPECT_EQ(rig.log.Find(1)->exec_time, Millis(3));  // the record has it either way
  EXPECT_EQ(e.metrics().Phases().count, 0);          // not kept: latency_phases off

  Rig bare;
  EngineOptions opts;
  opts.latency_phases = true;
  ASSERT_TRUE(bare.Start(&suite, Workers(1), ByApp(kFast), opts).ok());
  bare.e().Submit(Due(Ms(100)), kTimeZero);
  bare.e().OnResult(bare.exec.Result(0), Ms(5));  // an executor that reports no times
  ASSERT_NE(bare.log.Find(1), nullptr);
  EXPECT_EQ(bare.log.Find(1)->exec_time, Duration(-1));
  EXPECT_EQ(bare.e().metrics().Phases().count, 0);
}

TEST(WorkerProtocolTest, LateOutOfOrderDuplicateAndUnknownResults) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  ASSERT_TRUE(rig.Start(&suite, Workers(2), ByApp(kFast)).ok());
  Engine& e = rig.e();
  e.Submit(Due(Ms(20), 0), kTimeZero);  // q1 -> w0 (run A)
  e.Submit(Due(Ms(20), 1), kTimeZero);  // q2 -> w1 (run B)
  ASSERT_EQ(rig.exec.Runs().size(), 2u);
  ASSERT_EQ(rig.exec.sent[0].worker, 0u);
  ASSERT_EQ(rig.exec.sent[1].worker, 1u);

  // The second worker's batch answers first, in time; the first's after its deadline.
  rig.exec.Answer(e, 1, Ms(5));
  rig.exec.Answer(e, 0, Ms(30));
  ASSERT_EQ(rig.log.records.size(), 2u);
  EXPECT_EQ(rig.log.records[0].id, 2u);
  EXPECT_TRUE(rig.log.records[0].met_slo);
  EXPECT_EQ(rig.log.records[1].id, 1u);
  EXPECT_FALSE(rig.log.records[1].dropped);  // late is completed, not dropped
  EXPECT_FALSE(rig.log.records[1].met_slo);
  EXPECT_EQ(rig.log.records[1].finish, Ms(30));
  EXPECT_EQ(rig.log.records[1].worker, 0u);
  EXPECT_EQ(rig.log.records[1].variant, kFast);
  EXPECT_EQ(e.actions_in_flight(), 0u);

  // Stale: a duplicate of A, an id never sent, a worker that does not exist.
  rig.exec.Answer(e, 0, Ms(31));
  ActionResult unknown;
  unknown.id = 999;
  unknown.worker = 0;
  e.OnResult(unknown, Ms(32));
  ActionResult nobody;
  nobody.id = rig.exec.sent[1].id;
  nobody.worker = 7;
  e.OnResult(nobody, Ms(33));
  EXPECT_EQ(e.counters().stale_results, 3);

  // A result naming the wrong worker for a batch in flight is stale too; the batch stays
  // in flight until its own worker's result.
  e.Submit(Due(Ms(100), 1), Ms(40));  // q3 -> w1 (run C)
  ASSERT_EQ(rig.exec.Runs().size(), 3u);
  ActionResult wrong;
  wrong.id = rig.exec.sent[2].id;
  wrong.worker = 0;
  e.OnResult(wrong, Ms(41));
  EXPECT_EQ(e.counters().stale_results, 4);
  EXPECT_EQ(e.actions_in_flight(), 1u);
  EXPECT_EQ(rig.log.records.size(), 2u);
  rig.exec.Answer(e, 2, Ms(50));
  EXPECT_TRUE(rig.log.EachEndedOnce(3));
  EXPECT_EQ(e.in_system(), 0u);
  const MetricsSummary m = e.Summarize(Ms(50));
  EXPECT_EQ(m.completed, 3);
  EXPECT_EQ(m.late, 1);
  EXPECT_EQ(e.counters().failed_results, 0);
}

TEST(WorkerProtocolTest, MeasuredOutputsAndTimesAloneReachTheRecordsAndThePolicy) {
  const ProfileSuite suite = testing::SmallSuite();
  std::vector<CompletedRequest> seen;
  Rig rig;
  ASSERT_TRUE(
      rig.Start(&suite, Workers(1),
                testing::MakeSet(testing::Route([](const Query&, const std::vector<WorkerView>&) {
                                   return WorkerId{0};
                                 }),
                                 testing::TakeFront(4, kFast), {}, {},
                                 [&](const BatchCompletion& c) {
                                   seen.assign(c.requests.begin(), c.requests.end());
                                 }))
          .ok());
  Engine& e = rig.e();
  Query q = Due(Ms(100));
  q.payload = 41;
  e.Submit(q, kTimeZero);
  ActionResult r = rig.exec.Result(0, OkStatus(), kTimeZero, Ms(9));
  r.solo = {Millis(7)};
  r.outputs = {1234};
  e.OnResult(r, Ms(9));
  ASSERT_EQ(rig.log.records.size(), 1u);
  EXPECT_EQ(rig.log.records[0].payload, 41u);
  EXPECT_EQ(rig.log.records[0].output, 1234u);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].solo, Millis(7));
  // Vectors of the wrong length are ignored (no output, no time alone), not misread.
  e.Submit(Due(Ms(100)), Ms(10));
  r = rig.exec.Result(1, OkStatus(), Ms(10), Ms(20));
  r.solo = {Millis(1), Millis(2)};
  r.outputs = {5, 6};
  e.OnResult(r, Ms(20));
  ASSERT_EQ(rig.log.records.size(), 2u);
  EXPECT_EQ(rig.log.records[1].output, 0u);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_LT(seen[0].solo.count(), 0);
}

// ---------------------------------------------------------------- cold start

TEST(WorkerProtocolTest, ColdStartLoadsBeforeTheBatchAndRunsOnlyAfterTheLoadResult) {
  ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  std::vector<WorkerSpec> workers = Workers(1);
  workers[0].preload_none = true;
  ASSERT_TRUE(rig.Start(&suite, workers, ByApp(kSlow)).ok());
  Engine& e = rig.e();
  EXPECT_EQ(e.workers()[0].residency[kSlow], Residency::kAbsent);
  e.Submit(Due(Ms(500)), kTimeZero);
  ASSERT_EQ(rig.exec.sent.size(), 1u);
  EXPECT_EQ(rig.exec.sent[0].kind, Kind::kLoad);
  EXPECT_EQ(rig.exec.sent[0].variant, kSlow);
  EXPECT_EQ(rig.exec.sent[0].sent, kTimeZero);
  EXPECT_EQ(e.workers()[0].residency[kSlow], Residency::kLoading);
  EXPECT_TRUE(e.workers()[0].busy);
  e.Submit(Due(Ms(500)), Ms(1));  // waits behind the batch that waits for the load
  EXPECT_EQ(rig.exec.sent.size(), 1u);
  EXPECT_EQ(e.counters().loads, 1);
  EXPECT_EQ(e.Summarize(Ms(1)).cold_starts, 1);

  rig.exec.Answer(e, 0, Ms(50));
  EXPECT_EQ(e.workers()[0].residency[kSlow], Residency::kReady);
  ASSERT_EQ(rig.exec.sent.size(), 2u);
  EXPECT_EQ(rig.exec.sent[1].kind, Kind::kRun);
  EXPECT_EQ(rig.exec.sent[1].ids, (std::vector<QueryId>{1}));
  EXPECT_EQ(rig.exec.sent[1].earliest_start, Ms(50));  // sent when the load came back

  rig.exec.Answer(e, 1, Ms(80));
  ASSERT_EQ(rig.log.records.size(), 1u);
  EXPECT_EQ(rig.log.records[0].start, kTimeZero);  // the cold start is part of its service
  EXPECT_EQ(rig.log.records[0].finish, Ms(80));
  // Warm now: the next batch runs at once.
  ASSERT_EQ(rig.exec.sent.size(), 3u);
  EXPECT_EQ(rig.exec.sent[2].kind, Kind::kRun);
  EXPECT_EQ(e.counters().loads, 1);
}

TEST(WorkerProtocolTest, FailedLoadFailsItsBatchByTheSameRules) {
  ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  std::vector<WorkerSpec> workers = Workers(1);
  workers[0].preload_none = true;
  ASSERT_TRUE(rig.Start(&suite, workers, ByApp(kSlow)).ok());
  Engine& e = rig.e();
  e.Submit(Due(Ms(100)), kTimeZero);   // q1: batch waits for load L1
  e.Submit(Due(Ms(15)), AtMicros(1));  // q2: queued
  ASSERT_EQ(rig.exec.Loads().size(), 1u);

  rig.exec.Fail(e, 0, Ms(10));  // L1 fails: q1 re-queued; both form a batch; load L2
  EXPECT_EQ(e.workers()[0].residency[kSlow], Residency::kLoading);
  EXPECT_TRUE(rig.log.records.empty());
  ASSERT_EQ(rig.exec.sent.size(), 2u);
  EXPECT_EQ(rig.exec.sent[1].kind, Kind::kLoad);
  EXPECT_TRUE(rig.exec.Runs().empty());

  rig.exec.Fail(e, 1, Ms(20));  // L2 fails: q2 expired, q1 out of attempts
  EXPECT_EQ(e.workers()[0].residency[kSlow], Residency::kAbsent);
  ASSERT_EQ(rig.log.records.size(), 2u);
  EXPECT_EQ(rig.log.Find(1)->drop_reason, DropReason::kExecutorError);
  EXPECT_EQ(rig.log.Find(2)->drop_reason, DropReason::kExpired);
  EXPECT_TRUE(rig.exec.Runs().empty());
  EXPECT_FALSE(e.workers()[0].busy);
  EXPECT_EQ(e.in_system(), 0u);
  EXPECT_EQ(e.actions_in_flight(), 0u);
  EXPECT_EQ(e.counters().failed_results, 2);
  EXPECT_EQ(e.machines()[0].used_mb, 0.0);
}

// ---------------------------------------------------------------- memory

// Hardware "hw" with `memory_gb`; "fast" and "slow" take `mb` each (SmallSuite's latencies).
ProfileSuite MemorySuite(double memory_gb, double mb, int variants = 2) {
  ProfileSuite s;
  s.set_name("mem");
  TaskId t = s.AddTask(TaskSpec{"t", Millis(100)});
  HardwareId h = s.AddHardware(HardwareSpec{"hw", 1.0, 4, memory_gb});
  for (int i = 0; i < variants; ++i) {
    VariantId v =
        s.AddVariant(VariantSpec{"v" + std::to_string(i), t, 70.0 + i, mb, Millis(20 + 10 * i)});
    for (int b = 1; b <= 4; ++b)
      s.AddLatency(h, v, b, LatencyDistribution(std::vector<int64_t>(3, 10000 * (i + 1))));
  }
  return s;
}

TEST(WorkerProtocolTest, AMachineThatFitsOneVariantUnloadsItBeforeLoadingAnother) {
  // Two workers on one machine of 1 GB; each variant takes 600 MB.
  const ProfileSuite suite = MemorySuite(1.0, 600);
  Rig rig;
  std::vector<WorkerSpec> workers = Workers(2);
  for (WorkerSpec& w : workers) w.machine = "m";
  workers[0].preload = {0};
  workers[1].preload_none = true;
  // App k -> worker k, on variant k.
  ASSERT_TRUE(rig.Start(&suite, workers,
                        testing::MakeSet(
                            testing::Route([](const Query& q, const std::vector<WorkerView>&) {
                              return q.app;
                            }),
                            testing::TakeFront(
                                4, [](const Query& q) { return static_cast<VariantId>(q.app); })))
                  .ok());
  Engine& e = rig.e();
  ASSERT_EQ(e.machines().size(), 1u);
  EXPECT_EQ(e.workers()[0].machine, e.workers()[1].machine);
  EXPECT_DOUBLE_EQ(e.machines()[0].used_mb, 600);
  EXPECT_EQ(e.workers()[0].residency[0], Residency::kReady);

  e.Submit(Due(Ms(500), 1), kTimeZero);  // w1 needs v1: v0 on w0 must go first
  ASSERT_EQ(rig.exec.sent.size(), 2u);
  EXPECT_EQ(rig.exec.sent[0].kind, Kind::kUnload);
  EXPECT_EQ(rig.exec.sent[0].worker, 0u);
  EXPECT_EQ(rig.exec.sent[0].variant, 0u);
  EXPECT_EQ(rig.exec.sent[1].kind, Kind::kLoad);
  EXPECT_EQ(rig.exec.sent[1].worker, 1u);
  EXPECT_EQ(rig.exec.sent[1].variant, 1u);
  EXPECT_EQ(rig.exec.sent[1].expected, Millis(30));
  EXPECT_EQ(e.workers()[0].residency[0], Residency::kUnloading);
  EXPECT_EQ(e.workers()[1].residency[1], Residency::kLoading);
  EXPECT_DOUBLE_EQ(e.machines()[0].used_mb, 600);  // returned at the unload, reserved
  EXPECT_EQ(e.counters().unloads, 1);

  rig.exec.Answer(e, 0, Ms(1));
  EXPECT_EQ(e.workers()[0].residency[0], Residency::kAbsent);
  rig.exec.Answer(e, 1, Ms(30));
  EXPECT_EQ(e.workers()[1].residency[1], Residency::kReady);
  ASSERT_EQ(rig.exec.Runs(1).size(), 1u);
  rig.exec.Answer(e, rig.exec.Runs(1)[0], Ms(50));
  EXPECT_TRUE(rig.log.EachEndedOnce(1));
  EXPECT_DOUBLE_EQ(e.machines()[0].used_mb, 600);
}

TEST(WorkerProtocolTest, ResidencyCyclesAndTheLeastRecentlyUsedVariantIsEvicted) {
  // One worker; 1 GB holds two of the three 500 MB variants.
  const ProfileSuite suite = MemorySuite(1.0, 500, 3);
  Rig rig;
  std::vector<WorkerSpec> workers = Workers(1);
  workers[0].preload_none = true;
  ASSERT_TRUE(rig.Start(&suite, workers,
                        testing::MakeSet(
                            testing::Route([](const Query&, const std::vector<WorkerView>&) {
                              return WorkerId{0};
                            }),
                            testing::TakeFront(
                                1, [](const Query& q) { return static_cast<VariantId>(q.app); })))
                  .ok());
  Engine& e = rig.e();
  const WorkerView& w = e.workers()[0];  // stable: no worker is added in this test
  TimePoint now = kTimeZero;
  // Runs one query on variant `v`, answering the load (if any) and the batch.
  auto serve = [&](VariantId v) {
    const size_t before = rig.exec.sent.size();
    now += Millis(1);
    e.Submit(Due(now + Seconds(1), v), now);
    for (size_t i = before; i < rig.exec.sent.size(); ++i) {
      if (rig.exec.sent[i].kind != Kind::kUnload) continue;
      EXPECT_EQ(w.residency[rig.exec.sent[i].variant], Residency::kUnloading);
      rig.exec.Answer(e, i, now);
      EXPECT_EQ(w.residency[rig.exec.sent[i].variant], Residency::kAbsent);
    }
    const std::vector<size_t> loads = rig.exec.Loads();
    if (!loads.empty() && loads.back() >= before) {
      EXPECT_EQ(w.residency[v], Residency::kLoading);
      rig.exec.Answer(e, loads.back(), now);
    }
    EXPECT_EQ(w.residency[v], Residency::kReady);
    ASSERT_FALSE(rig.exec.Runs().empty());
    rig.exec.Answer(e, rig.exec.Runs().back(), now);
  };
  serve(0);
  serve(1);
  EXPECT_TRUE(rig.exec.Unloads().empty());  // both fit
  EXPECT_DOUBLE_EQ(e.machines()[0].used_mb, 1000);
  serve(0);  // v0 is now the most recently used; v1 the least
  serve(2);  // evicts v1
  ASSERT_EQ(rig.exec.Unloads().size(), 1u);
  const PuppetExecutor::Sent& unload = rig.exec.sent[rig.exec.Unloads()[0]];
  EXPECT_EQ(unload.variant, 1u);
  EXPECT_LT(rig.exec.Unloads()[0], rig.exec.Loads().back());  // unload sent before the load
  EXPECT_EQ(w.residency[0], Residency::kReady);
  EXPECT_EQ(w.residency[1], Residency::kAbsent);
  EXPECT_EQ(w.residency[2], Residency::kReady);
  serve(1);  // evicts v0 (used before v2)
  EXPECT_EQ(rig.exec.sent[rig.exec.Unloads().back()].variant, 0u);
  EXPECT_DOUBLE_EQ(e.machines()[0].used_mb, 1000);
  EXPECT_EQ(e.counters().loads, 4);
  EXPECT_EQ(e.counters().unloads, 2);
  // Four loads, v1's second one a reload (v1 was evicted in between).
  EXPECT_EQ(e.Summarize(now).cold_starts, 4);
  EXPECT_EQ(e.Summarize(now).reloads, 1);
  EXPECT_EQ(e.Summarize(now).cold_starts_waited, 4) << "each load was for a waiting batch";
  EXPECT_TRUE(rig.log.EachEndedOnce(5));
  EXPECT_EQ(e.actions_in_flight(), 0u);
}

// ---------------------------------------------------------------- plans

// A planning function that adds a new worker (hardware 0) pinned to `v`: at every tick,
// or (`once`) at the first only.
std::function<void(const PlanningInput&, DeploymentPlan*)> AddPinnedWorker(VariantId v, bool once) {
  return [v, once, plans = 0](const PlanningInput&, DeploymentPlan* out) mutable {
    if (once && plans++ > 0) return;
    WorkerPlan p;  // worker = kNoId: a new one
    p.hardware = 0;
    p.pinned = v;
    out->workers.push_back(p);
    out->change = true;
  };
}

TEST(WorkerProtocolTest, AnAddedWorkerServesOnlyAfterItsLoadResult) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  std::vector<WorkerSpec> workers = Workers(1);
  workers[0].preload = {kFast};
  ASSERT_TRUE(rig.Start(&suite, workers,
                        testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(1, kFast),
                                         AddPinnedWorker(kSlow, /*once=*/true)))
                  .ok());
  Engine& e = rig.e();
  e.OnPlanTick(Ms(1000));
  ASSERT_EQ(e.workers().size(), 2u);
  EXPECT_EQ(e.counters().workers_added, 1);
  EXPECT_EQ(e.workers()[1].phase, WorkerPhase::kStarting);
  EXPECT_FALSE(e.workers()[1].active);
  EXPECT_EQ(e.workers()[1].pinned, kSlow);
  EXPECT_NE(e.workers()[1].machine, e.workers()[0].machine);
  ASSERT_EQ(rig.exec.Loads(1).size(), 1u);
  const size_t load = rig.exec.Loads(1)[0];
  EXPECT_EQ(rig.exec.sent[load].variant, kSlow);
  EXPECT_EQ(e.workers()[1].residency[kSlow], Residency::kLoading);

  // While it starts, everything goes to w0.
  for (int i = 0; i < 4; ++i) e.Submit(Due(Ms(5000)), Ms(1001 + i));
  EXPECT_TRUE(rig.exec.Runs(1).empty());
  EXPECT_EQ(e.workers()[1].queue_length, 0u);
  EXPECT_EQ(e.workers()[0].queue_length, 3u);

  rig.exec.Answer(e, load, Ms(1100));
  EXPECT_EQ(e.workers()[1].phase, WorkerPhase::kActive);
  EXPECT_TRUE(e.workers()[1].active);
  EXPECT_EQ(e.workers()[1].residency[kSlow], Residency::kReady);
  e.Submit(Due(Ms(5000)), Ms(1101));
  e.Submit(Due(Ms(5000)), Ms(1102));
  ASSERT_FALSE(rig.exec.Runs(1).empty());
  const PuppetExecutor::Sent& run = rig.exec.sent[rig.exec.Runs(1)[0]];
  EXPECT_GT(rig.exec.Runs(1)[0], load);
  EXPECT_EQ(run.variant, kSlow);  // the plan's pin overrides the batch's variant
  EXPECT_EQ(run.earliest_start, Ms(1101));
}

// A new worker serves once its `load` is in; its `prefetch` loads one at a time once it
// serves and only while it is idle (a batch goes out while one loads), and never evicts:
// 1 GB holds v0 and v1, so v2 is left out.
TEST(WorkerProtocolTest, PrefetchLoadsAfterServingWhileIdleWithoutEvicting) {
  const ProfileSuite suite = MemorySuite(1.0, 500, 3);
  Rig rig;
  std::vector<WorkerSpec> workers = Workers(1);
  workers[0].preload_none = true;
  int plans = 0;
  ASSERT_TRUE(rig.Start(&suite, workers,
                        testing::MakeSet(
                            testing::Route([](const Query&, const std::vector<WorkerView>& ws) {
                              return ws.size() > 1 && ws[1].active ? WorkerId{1} : WorkerId{0};
                            }),
                            testing::TakeFront(1, [](const Query&) { return VariantId{0}; }),
                            [&](const PlanningInput&, DeploymentPlan* out) {
                              if (plans++ > 0) return;
                              WorkerPlan p;  // a new worker on a machine of its own
                              p.hardware = 0;
                              p.load = {0};
                              p.prefetch = {1, 2};
                              out->workers.push_back(p);
                              out->change = true;
                            }))
                  .ok());
  Engine& e = rig.e();
  e.OnPlanTick(Ms(1000));
  ASSERT_EQ(e.workers().size(), 2u);
  ASSERT_EQ(rig.exec.Loads(1).size(), 1u);  // only what it needs to serve
  EXPECT_EQ(e.workers()[1].prefetch, (std::vector<VariantId>{1, 2}));
  EXPECT_FALSE(e.workers()[1].active);

  rig.exec.Answer(e, rig.exec.Loads(1)[0], Ms(1100));
  EXPECT_TRUE(e.workers()[1].active);
  ASSERT_EQ(rig.exec.Loads(1).size(), 2u);  // idle: the first prefetch goes out
  EXPECT_EQ(rig.exec.sent[rig.exec.Loads(1)[1]].variant, 1u);
  EXPECT_EQ(e.workers()[1].residency[1], Residency::kLoading);
  EXPECT_EQ(e.workers()[1].prefetch, std::vector<VariantId>{2});

  e.Submit(Due(Ms(5000)), Ms(1101));  // served on v0 while v1 loads
  ASSERT_EQ(rig.exec.Runs(1).size(), 1u);
  rig.exec.Answer(e, rig.exec.Loads(1)[1], Ms(1120));
  EXPECT_EQ(rig.exec.Loads(1).size(), 2u);  // busy: no prefetch
  rig.exec.Answer(e, rig.exec.Runs(1)[0], Ms(1130));
  // Idle again: v2 would need 500 MB more of a full 1 GB machine; left out, none evicted.
  EXPECT_EQ(rig.exec.Loads(1).size(), 2u);
  EXPECT_TRUE(rig.exec.Unloads(1).empty());
  EXPECT_TRUE(e.workers()[1].prefetch.empty());
  EXPECT_EQ(e.workers()[1].residency[0], Residency::kReady);
  EXPECT_EQ(e.workers()[1].residency[1], Residency::kReady);
  EXPECT_EQ(e.workers()[1].residency[2], Residency::kAbsent);
  EXPECT_EQ(e.actions_in_flight(), 0u);
  // Two loads (the plan's v0, the prefetch of v1), both ahead of need: no batch waited.
  EXPECT_EQ(e.Summarize(Ms(1130)).cold_starts, 2);
  EXPECT_EQ(e.Summarize(Ms(1130)).cold_starts_waited, 0);
}

// EngineOptions::max_workers_of_type: a plan adding a worker beyond the bound of its type
// is refused and warned about; a retired worker of the type no longer counts.
TEST(WorkerProtocolTest, AWorkerBeyondItsTypesBoundIsNotAdded) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  EngineOptions opts;
  opts.max_workers_of_type = {2};
  ASSERT_TRUE(rig.Start(&suite, Workers(1),
                        testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(1, kFast),
                                         AddPinnedWorker(kSlow, /*once=*/false)),
                        opts)
                  .ok());
  Engine& e = rig.e();
  e.OnPlanTick(Ms(1000));
  EXPECT_EQ(e.workers().size(), 2u);
  EXPECT_EQ(e.counters().invalid_decisions, 0);
  e.OnPlanTick(Ms(2000));
  EXPECT_EQ(e.workers().size(), 2u);
  EXPECT_EQ(e.counters().invalid_decisions, 1);
  ASSERT_FALSE(rig.warnings.empty());
  EXPECT_NE(rig.warnings.back().find("beyond its limit of 2"), std::string::npos)
      << rig.warnings.back();
  // w1's load fails: it is retired, and the next plan's worker fits again.
  rig.exec.Fail(e, rig.exec.Loads(1).at(0), Ms(2100));
  ASSERT_EQ(e.workers()[1].phase, WorkerPhase::kRetired);
  e.OnPlanTick(Ms(3000));
  EXPECT_EQ(e.workers().size(), 3u);
}

TEST(WorkerProtocolTest, AnAddedWorkerWhosePinnedLoadFailsIsRetired) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  ASSERT_TRUE(rig.Start(&suite, Workers(1),
                        testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(1, kFast),
                                         AddPinnedWorker(kSlow, /*once=*/false)))
                  .ok());
  Engine& e = rig.e();
  e.OnPlanTick(Ms(1000));
  ASSERT_EQ(e.workers().size(), 2u);
  rig.exec.Fail(e, rig.exec.Loads(1).at(0), Ms(1010));
  EXPECT_EQ(e.workers()[1].phase, WorkerPhase::kRetired);
  EXPECT_FALSE(e.workers()[1].active);
  EXPECT_EQ(e.workers()[1].residency[kSlow], Residency::kAbsent);
  EXPECT_EQ(e.workers()[0].phase, WorkerPhase::kActive);
}

TEST(WorkerProtocolTest, ARemovedWorkerDrainsItsQueueThenIsRetiredAndUnloads) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  int plans = 0;
  std::vector<WorkerSpec> workers = Workers(2);
  for (WorkerSpec& w : workers) w.preload = {kFast};
  ASSERT_TRUE(rig.Start(&suite, workers,
                        testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(1, kFast),
                                         [&](const PlanningInput&, DeploymentPlan* out) {
                                           WorkerPlan p;
                                           p.worker = 1;
                                           // First a removal, then (for the retired
                                           // worker) a plan the engine must reject.
                                           p.remove = plans++ == 0;
                                           out->workers.push_back(p);
                                           out->change = true;
                                         }))
                  .ok());
  Engine& e = rig.e();
  for (int i = 0; i < 4; ++i) e.Submit(Due(Ms(5000)), Ms(i));  // q1,q3 -> w0; q2,q4 -> w1
  ASSERT_EQ(e.workers()[1].queue_length, 1u);
  e.OnPlanTick(Ms(10));
  EXPECT_EQ(e.workers()[1].phase, WorkerPhase::kDraining);
  EXPECT_FALSE(e.workers()[1].active);
  for (int i = 0; i < 2; ++i) e.Submit(Due(Ms(5000)), Ms(11 + i));  // both to w0
  EXPECT_EQ(e.workers()[1].queue_length, 1u);
  EXPECT_EQ(e.workers()[0].queue_length, 3u);

  // It finishes its batch, runs its queued query, and only then retires.
  rig.exec.Answer(e, rig.exec.Runs(1).at(0), Ms(20));
  ASSERT_EQ(rig.exec.Runs(1).size(), 2u);
  EXPECT_EQ(rig.exec.sent[rig.exec.Runs(1)[1]].ids, (std::vector<QueryId>{4}));
  EXPECT_EQ(e.workers()[1].phase, WorkerPhase::kDraining);
  EXPECT_TRUE(rig.exec.Unloads(1).empty());
  rig.exec.Answer(e, rig.exec.Runs(1).at(1), Ms(30));
  EXPECT_EQ(e.workers()[1].phase, WorkerPhase::kRetired);
  ASSERT_EQ(rig.exec.Unloads(1).size(), 1u);
  EXPECT_EQ(rig.exec.sent[rig.exec.Unloads(1)[0]].variant, kFast);
  EXPECT_EQ(e.workers()[1].residency[kFast], Residency::kUnloading);
  rig.exec.Answer(e, rig.exec.Unloads(1)[0], Ms(31));
  EXPECT_EQ(e.workers()[1].residency[kFast], Residency::kAbsent);
  EXPECT_DOUBLE_EQ(e.machines()[e.workers()[1].machine].used_mb, 0);

  // A plan for the retired worker is rejected (counted), and it stays retired.
  const int64_t invalid = e.counters().invalid_decisions;
  e.OnPlanTick(Ms(40));
  EXPECT_EQ(e.counters().invalid_decisions, invalid + 1);
  EXPECT_EQ(e.workers()[1].phase, WorkerPhase::kRetired);
  rig.exec.AnswerAll(e, Ms(50));
  EXPECT_TRUE(rig.log.EachEndedOnce(6));
  EXPECT_EQ(e.in_system(), 0u);
  EXPECT_EQ(rig.exec.Runs(1).size(), 2u);  // nothing more ran on it
}

// A prefetch a placement policy asks for on a worker that is still starting is a load
// like any other, but not the load the worker waits for: the worker must stay kStarting
// until its own (pinned) load has come back.
TEST(WorkerProtocolTest, APrefetchDoesNotStandInForAStartingWorkersOwnLoad) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  ASSERT_TRUE(rig.Start(&suite, Workers(1),
                        testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(1, kFast),
                                         AddPinnedWorker(kSlow, /*once=*/true),
                                         [](const Query&, const std::vector<WorkerView>& w,
                                            const std::vector<MachineView>&, TimePoint) {
                                           PlacementDecision d;
                                           if (w.size() > 1) {
                                             d.prefetch_worker = 1;
                                             d.prefetch_variant = kFast;
                                           }
                                           return d;
                                         }))
                  .ok());
  Engine& e = rig.e();
  e.OnPlanTick(Ms(1000));
  ASSERT_EQ(rig.exec.Loads(1).size(), 1u);
  const size_t own = rig.exec.Loads(1)[0];
  e.Submit(Due(Ms(5000)), Ms(1001));
  // The engine may ignore a prefetch on a starting worker (the plan's `load` is the way to
  // give a new worker more variants); if it sends it, its result must not start the worker.
  if (rig.exec.Loads(1).size() == 2u) {
    const size_t prefetch = rig.exec.Loads(1)[1];
    EXPECT_EQ(rig.exec.sent[prefetch].variant, kFast);
    EXPECT_EQ(e.counters().prefetches, 1);
    rig.exec.Answer(e, prefetch, Ms(1002));
  }
  EXPECT_EQ(e.workers()[1].phase, WorkerPhase::kStarting)
      << "a prefetch's result activated a worker whose pinned load is still in flight";
  EXPECT_FALSE(e.workers()[1].active);
  // Its own load fails: a worker that cannot load its pinned variant never serves.
  rig.exec.Fail(e, own, Ms(1003));
  EXPECT_EQ(e.workers()[1].phase, WorkerPhase::kRetired);
  EXPECT_TRUE(rig.exec.Runs(1).empty());
}

// A worker retired while a load (here a prefetch) is still in flight must give that
// memory back when the load's result arrives: nothing else will ever unload it.
TEST(WorkerProtocolTest, ALoadThatLandsOnARetiredWorkerIsUnloaded) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  std::vector<WorkerSpec> workers = Workers(2);
  for (WorkerSpec& w : workers) w.preload = {kFast};
  ASSERT_TRUE(rig.Start(&suite, workers,
                        testing::MakeSet(
                            testing::Route([](const Query&, const std::vector<WorkerView>&) {
                              return WorkerId{0};
                            }),
                            testing::TakeFront(1, kFast),
                            [&](const PlanningInput&, DeploymentPlan* out) {
                              WorkerPlan p;
                              p.worker = 1;
                              p.remove = true;
                              out->workers.push_back(p);
                              out->change = true;
                            },
                            [](const Query&, const std::vector<WorkerView>&,
                               const std::vector<MachineView>&, TimePoint) {
                              PlacementDecision d;
                              d.prefetch_worker = 1;
                              d.prefetch_variant = kSlow;
                              return d;
                            }))
                  .ok());
  Engine& e = rig.e();
  e.Submit(Due(Ms(5000)), kTimeZero);
  ASSERT_EQ(rig.exec.Loads(1).size(), 1u);
  const size_t prefetch = rig.exec.Loads(1)[0];
  e.OnPlanTick(Ms(1));
  ASSERT_EQ(e.workers()[1].phase, WorkerPhase::kRetired);
  rig.exec.Answer(e, prefetch, Ms(2));
  rig.exec.AnswerAll(e, Ms(3));
  EXPECT_NE(e.workers()[1].residency[kSlow], Residency::kReady)
      << "a retired worker holds a variant nobody will unload";
  bool unloaded_slow = false;
  for (size_t i : rig.exec.Unloads(1)) unloaded_slow |= rig.exec.sent[i].variant == kSlow;
  EXPECT_TRUE(unloaded_slow);
  EXPECT_EQ(e.actions_in_flight(), 0u);
}

// ---------------------------------------------------------------- the profile executor

// Keeps what an executor posts.
class CaptureSink : public ResultSink {
 public:
  struct Posted {
    ActionResult result;
    TimePoint at;
    bool timed;
  };
  void PostAt(ActionResult&& r, TimePoint at) override {
    posted.push_back({std::move(r), at, true});
  }
  void Post(ActionResult r) override { posted.push_back({std::move(r), TimePoint{}, false}); }
  std::vector<Posted> posted;
};

// The simulator's and the emulated server's executor answers every action exactly once,
// for the time it ends: a batch after the profile's latency, a load after the variant's
// load time, an unload at once.
TEST(ProfileExecutorTest, AnswersEachActionOnceForTheTimeItEnds) {
  ProfileSuite suite = testing::SmallSuite();
  const VariantId heavy = suite.AddVariant(VariantSpec{"heavy", 0, 90, 100, Millis(40)});
  ProfileExecutor exec(ServiceTimeModel(&suite, {}, 1));
  CaptureSink sink;
  exec.Attach(&sink);
  std::vector<Query> qs(2);
  RunBatch run;
  run.id = 7;
  run.worker = 3;
  run.variant = kFast;
  run.queries = qs;
  run.rows = 2;
  run.earliest_start = Ms(5);
  EXPECT_EQ(exec.Send(run), Millis(12));
  LoadVariant load;
  load.id = 8;
  load.worker = 3;
  load.variant = heavy;
  load.sent = Ms(6);
  EXPECT_EQ(exec.Send(load), Millis(40));
  UnloadVariant unload;
  unload.id = 9;
  unload.worker = 2;
  unload.variant = kSlow;
  unload.sent = Ms(7);
  EXPECT_EQ(exec.Send(unload), Duration(0));
  ASSERT_EQ(sink.posted.size(), 3u);
  const auto& r = sink.posted;
  EXPECT_TRUE(r[0].timed && r[1].timed && r[2].timed);
  EXPECT_EQ(r[0].result.id, 7u);
  EXPECT_EQ(r[0].result.worker, 3u);
  EXPECT_TRUE(r[0].result.status.ok());
  EXPECT_EQ(r[0].result.begin, Ms(5));
  EXPECT_EQ(r[0].result.end, Ms(17));
  EXPECT_EQ(r[0].at, Ms(17));
  EXPECT_EQ(r[1].result.id, 8u);
  EXPECT_EQ(r[1].at, Ms(46));
  EXPECT_EQ(r[2].result.id, 9u);
  EXPECT_EQ(r[2].result.worker, 2u);
  EXPECT_EQ(r[2].at, Ms(7));
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

// Outputs of results the engine cannot attribute (failed, stale, not one per query) go
// back to their owner through EngineOptions::release_output: nothing stored leaks.
TEST(WorkerProtocolTest, OutputsOfDiscardedResultsAreReleased) {
  const ProfileSuite suite = testing::SmallSuite();
  Rig rig;
  std::vector<PayloadHandle> released;
  EngineOptions opts;
  opts.release_output = [&](PayloadHandle h) { released.push_back(h); };
  ASSERT_TRUE(rig.Start(&suite, Workers(1), ByApp(kFast, 1), std::move(opts)).ok());
  Engine& e = rig.e();
  e.Submit(Due(Ms(100)), kTimeZero);
  e.Submit(Due(Ms(100)), AtMicros(1));
  ASSERT_EQ(rig.exec.Runs().size(), 1u);

  // A failed result with outputs: released, and the query is re-queued.
  ActionResult failed = rig.exec.Result(0, UnavailableError("gpu fell off"), kTimeZero, Ms(1));
  failed.outputs = {11};
  e.OnResult(failed, Ms(1));
  EXPECT_EQ(released, (std::vector<PayloadHandle>{11}));

  // An OK result whose outputs are not one per query: none is attributed, all released.
  ASSERT_EQ(rig.exec.Runs().size(), 2u);
  ActionResult odd = rig.exec.Result(1, OkStatus(), Ms(1), Ms(2));
  odd.outputs = {21, 22};
  e.OnResult(odd, Ms(2));
  EXPECT_EQ(released, (std::vector<PayloadHandle>{11, 21, 22}));
  ASSERT_NE(rig.log.Find(1), nullptr);  // the re-queued q1 ran first (same deadline, lower id)
  EXPECT_EQ(rig.log.Find(1)->output, 0u);

  // A good one: its output travels with the record, nothing released.
  ASSERT_EQ(rig.exec.Runs().size(), 3u);
  ActionResult good = rig.exec.Result(2, OkStatus(), Ms(2), Ms(3));
  good.outputs = {31};
  e.OnResult(good, Ms(3));
  ASSERT_NE(rig.log.Find(2), nullptr);
  EXPECT_EQ(rig.log.Find(2)->output, 31u);
  EXPECT_EQ(released.size(), 3u);

  // Its duplicate is stale: released, nothing finishes twice.
  e.OnResult(good, Ms(4));
  EXPECT_EQ(released, (std::vector<PayloadHandle>{11, 21, 22, 31}));
  EXPECT_TRUE(rig.log.EachEndedOnce(2));
}

}  // namespace
}  // namespace sloserve

// Policies that return invalid decisions, under a seeded fuzz loop of arrivals, results
// (ok, failed, could-not-start, duplicate, unknown), timers and plan ticks: the engine
// rejects every bad decision (a counted `internal` drop, never undefined behaviour),
// every query ends exactly once, and its counts balance (docs/architecture.md,
// "Validation").
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sloserve/engine/engine.h"
#include "support/puppet_executor.h"
#include "support/test_policies.h"

namespace sloserve {
namespace {

using testing::PuppetExecutor;

// Two variants of 400 and 700 MB on hardware with 1 GB (so loads evict), one with no
// memory limit, and a task 1 no variant serves.
ProfileSuite FuzzSuite() {
  ProfileSuite s;
  s.set_name("fuzz");
  TaskId t = s.AddTask(TaskSpec{"t", Millis(100)});
  s.AddTask(TaskSpec{"unserved", Millis(100)});
  HardwareId small = s.AddHardware(HardwareSpec{"small", 1.0, 4, 1.0});
  HardwareId big = s.AddHardware(HardwareSpec{"big", 2.0, 8, 0});
  VariantId a = s.AddVariant(VariantSpec{"a", t, 70, 400, Millis(20)});
  VariantId b = s.AddVariant(VariantSpec{"b", t, 80, 700, Millis(50)});
  for (HardwareId h : {small, big}) {
    for (int k = 1; k <= 8; ++k) {
      s.AddLatency(h, a, k, LatencyDistribution(std::vector<int64_t>(3, 5000 + 1000 * k)));
      s.AddLatency(h, b, k, LatencyDistribution(std::vector<int64_t>(3, 15000 + 3000 * k)));
    }
  }
  return s;
}

// The chaos every policy draws from; `chaos` false makes them behave.
struct Chaos {
  std::mt19937 rng;
  bool on = true;
  explicit Chaos(uint32_t seed) : rng(seed) {}
  uint32_t Below(uint32_t n) { return n == 0 ? 0 : static_cast<uint32_t>(rng() % n); }
  bool Chance(int percent) { return on && Below(100) < static_cast<uint32_t>(percent); }
};

WorkerId AnyActive(Chaos& c, const std::vector<WorkerView>& w) {
  std::vector<WorkerId> active;
  for (const WorkerView& v : w)
    if (v.active) active.push_back(v.id);
  return active.empty() ? kNoId : active[c.Below(static_cast<uint32_t>(active.size()))];
}

PolicySet ChaosPolicies(Chaos* c, bool shared) {
  PolicySet set;
  // Dispatch: duplicate and out-of-range positions, unknown and inactive (starting,
  // draining, retired) targets.
  set.dispatch = std::make_unique<testing::FnDispatch>(
      [c](const QueueView& q, const std::vector<WorkerView>& w, TimePoint,
          std::vector<Assignment>* out) {
        for (uint32_t i = 0; i < q.size(); ++i) {
          if (c->Chance(10)) continue;  // leave it queued
          WorkerId to = AnyActive(*c, w);
          if (c->Chance(8)) to = static_cast<WorkerId>(w.size() + c->Below(3));  // unknown
          if (c->Chance(8)) to = c->Below(static_cast<uint32_t>(w.size()));      // any phase
          if (to == kNoId) continue;
          out->push_back({i, to});
          if (c->Chance(5)) out->push_back({i, to});  // twice
        }
        if (c->Chance(5)) out->push_back({static_cast<uint32_t>(q.size() + c->Below(4)), 0});
      },
      shared);
  // Batching: duplicate, out-of-range, overlapping take/drop/reject positions, unknown
  // variants, waits in the past and the future, idling with a queue.
  set.batching = std::make_unique<testing::FnBatching>(
      [c](const WorkerView&, const QueueView& q, TimePoint now, BatchDecision* d) {
        d->Clear();
        if (q.empty()) return;
        const uint32_t n = static_cast<uint32_t>(q.size());
        if (c->Chance(8)) {
          d->kind = BatchDecision::Kind::kWaitUntil;
          d->wait_until = now + Micros(static_cast<int64_t>(c->Below(5000))) - Micros(1000);
          return;
        }
        if (c->Chance(4)) return;  // idle
        d->kind = BatchDecision::Kind::kRun;
        d->variant = c->Below(2);
        if (c->Chance(5)) d->variant = 2 + c->Below(5);  // unknown
        const uint32_t k = 1 + c->Below(std::min<uint32_t>(n, 6));
        for (uint32_t i = 0; i < k; ++i) d->take.push_back(c->on ? c->Below(n) : i);
        std::sort(d->take.begin(), d->take.end());
        if (!c->on) return;
        // Random picks may repeat: that alone is an invalid decision about half the time.
        if (!c->Chance(50))
          d->take.erase(std::unique(d->take.begin(), d->take.end()), d->take.end());
        if (c->Chance(5)) d->take.push_back(n + c->Below(3));  // out of range
        if (c->Chance(10)) d->drop.push_back(c->Below(n));
        if (c->Chance(10)) d->reject.push_back(c->Below(n));
        if (c->Chance(3)) d->drop.push_back(n + 7);
        if (c->Chance(5)) d->take.clear();  // kRun with nothing to run
      });
  // Placement: mostly none; sometimes a worker (any phase, unknown), a prefetch (valid or
  // not).
  if (!shared) {  // (a placement policy needs worker queues)
    set.placement =
        std::make_unique<testing::FnPlacement>([c](const Query&, const std::vector<WorkerView>& w,
                                                   const std::vector<MachineView>&, TimePoint) {
          PlacementDecision d;
          if (c->Chance(10)) d.worker = c->Below(static_cast<uint32_t>(w.size() + 2));
          if (c->Chance(10)) {
            d.prefetch_worker = c->Below(static_cast<uint32_t>(w.size() + 1));
            d.prefetch_variant = c->Below(3);
          }
          return d;
        });
  }
  // Planning: add workers (good and bad hardware, machines, pins), remove, drain,
  // reactivate, pin unknown variants, name unknown workers.
  set.planning =
      std::make_unique<testing::FnPlanning>([c](const PlanningInput& in, DeploymentPlan* out) {
        if (!c->on) return;
        const uint32_t n = static_cast<uint32_t>(in.workers->size());
        const uint32_t changes = c->Below(3);
        for (uint32_t i = 0; i < changes; ++i) {
          WorkerPlan p;
          const uint32_t what = c->Below(6);
          if (what == 0 && n < 12) {  // a new worker
            p.worker = kNoId;
            p.hardware = c->Chance(90) ? c->Below(2) : 5;
            p.machine =
                c->Chance(50) ? kNoId : c->Below(static_cast<uint32_t>(in.machines->size() + 1));
            p.pinned = c->Chance(50) ? kNoId : c->Below(3);
            if (c->Chance(30)) p.load = {c->Below(3), c->Below(2)};
          } else {
            p.worker = c->Below(n + 1);  // sometimes unknown
            p.active = c->Chance(60);
            p.remove = what == 1 && c->Chance(30);
            p.pinned = c->Chance(70) ? kNoId : c->Below(3);
            p.cores = static_cast<int>(c->Below(4));
            p.quota = 0.5;
          }
          out->workers.push_back(p);
        }
        out->change = changes > 0;
      });
  return set;
}

struct FuzzStats {
  int64_t submitted = 0;
  int64_t answered = 0;
  int64_t failed = 0;  // non-OK answers to real actions
  int64_t bogus = 0;   // duplicates, unknown ids, wrong workers
};

// Memory held on each machine equals what its workers' residency says.
void ExpectMemoryConsistent(const Engine& e, const ProfileSuite& suite) {
  std::vector<double> held(e.machines().size(), 0);
  for (const WorkerView& w : e.workers()) {
    for (VariantId v = 0; v < w.residency.size(); ++v) {
      if (w.residency[v] == Residency::kLoading || w.residency[v] == Residency::kReady)
        held[w.machine] += suite.variants()[v].memory_mb;
    }
  }
  for (size_t m = 0; m < held.size(); ++m)
    EXPECT_NEAR(e.machines()[m].used_mb, held[m], 1e-6) << "machine " << m;
}

void Fuzz(uint32_t seed, bool shared, int steps) {
  SCOPED_TRACE("seed " + std::to_string(seed) + (shared ? " shared" : " per-worker"));
  const ProfileSuite suite = FuzzSuite();
  Chaos chaos(seed);
  PuppetExecutor exec;
  std::vector<WorkerSpec> workers(4);
  workers[0].machine = "m0";
  workers[1].machine = "m0";
  workers[1].preload_none = true;
  workers[2].hardware = 1;
  workers[3].preload_none = true;
  EngineOptions opts;
  opts.max_worker_queue = 40;
  opts.max_central_queue = 200;
  std::vector<std::string> warnings;
  opts.log = [&](const std::string& line) { warnings.push_back(line); };
  auto created = Engine::Create(&suite, workers, ChaosPolicies(&chaos, shared), &exec, opts, seed);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Engine& e = **created;
  std::vector<int> ends(1, 0);  // by query id
  int64_t ended = 0, internal = 0;
  e.set_sink([&](const QueryRecord& r) {
    if (r.id >= ends.size()) {
      ADD_FAILURE() << "record for query " << r.id << " never submitted";
      return;
    }
    if (++ends[r.id] > 1) ADD_FAILURE() << "query " << r.id << " ended twice";
    ++ended;
    internal += r.dropped && r.drop_reason == DropReason::kInternal ? 1 : 0;
  });

  FuzzStats st;
  TimePoint now = kTimeZero;
  auto answer = [&](size_t i) {
    const uint32_t r = chaos.Below(100);
    Status status = OkStatus();
    if (chaos.on && r < 15) status = UnavailableError("fuzz: failed");
    if (chaos.on && r >= 15 && r < 22)
      status = Status(StatusCode::kDeadlineExceeded, "fuzz: could not start");
    if (!status.ok()) ++st.failed;
    ++st.answered;
    exec.Answer(e, i, now, status);
  };
  for (int step = 0; step < steps; ++step) {
    if (chaos.Below(3) == 0) now += Micros(static_cast<int64_t>(chaos.Below(3000)));
    const uint32_t what = chaos.Below(100);
    if (what < 40) {  // an arrival
      Query q;
      q.deadline = now + Millis(1 + static_cast<int64_t>(chaos.Below(80)));
      q.app = chaos.Below(3);
      q.size = 1 + static_cast<int32_t>(chaos.Below(2));
      if (chaos.Chance(3)) q.task = 1 + chaos.Below(3);  // unserved / unknown task
      ends.push_back(0);
      ++st.submitted;
      const QueryId id = e.Submit(q, now);
      EXPECT_EQ(id, static_cast<QueryId>(st.submitted));
    } else if (what < 75) {  // a result, any order
      const std::vector<size_t> open = exec.Unanswered();
      if (!open.empty()) answer(open[chaos.Below(static_cast<uint32_t>(open.size()))]);
    } else if (what < 82) {  // a stale result
      ActionResult r;
      const uint32_t kind = chaos.Below(3);
      if (kind == 0 && !exec.sent.empty()) {  // a duplicate of an answered action
        const size_t i = chaos.Below(static_cast<uint32_t>(exec.sent.size()));
        if (!exec.sent[i].answered) continue;
        r.id = exec.sent[i].id;
        r.worker = exec.sent[i].worker;
      } else if (kind == 1) {  // an id never sent
        r.id = 1'000'000 + chaos.Below(1000);
        r.worker = chaos.Below(static_cast<uint32_t>(e.workers().size() + 2));
      } else {  // an action in flight, named with the wrong worker
        const std::vector<size_t> open = exec.Unanswered();
        if (open.empty()) continue;
        const PuppetExecutor::Sent& s =
            exec.sent[open[chaos.Below(static_cast<uint32_t>(open.size()))]];
        r.id = s.id;
        r.worker = s.worker + 1 + chaos.Below(3);
      }
      ++st.bogus;
      e.OnResult(r, now);
    } else if (what < 92) {
      e.OnTimer(now);
    } else {
      e.OnPlanTick(now);
    }
    // Invariants at every step.
    ASSERT_EQ(e.in_system(), static_cast<size_t>(st.submitted - ended)) << "step " << step;
    ASSERT_EQ(e.actions_in_flight(), exec.Unanswered().size()) << "step " << step;
  }
  ExpectMemoryConsistent(e, suite);

  // Behave from now on: every action is answered OK, timers fire, plans flush the central
  // queue; the engine serves what it can, then drops what no one will take.
  chaos.on = false;
  for (int round = 0; round < 200; ++round) {
    now += Millis(1);
    for (size_t i : exec.Unanswered()) answer(i);
    e.OnTimer(now + Seconds(1));
    if (exec.Unanswered().empty()) break;
  }
  EXPECT_TRUE(exec.Unanswered().empty());
  e.DropAllQueued(now);
  for (size_t i : exec.Unanswered()) answer(i);  // none: queued queries have no actions
  EXPECT_EQ(e.in_system(), 0u);
  EXPECT_EQ(e.actions_in_flight(), 0u);
  for (QueryId id = 1; id < ends.size(); ++id) ASSERT_EQ(ends[id], 1) << "query " << id;

  const MetricsSummary m = e.Summarize(now);
  const EngineCounters& c = e.counters();
  EXPECT_EQ(m.arrived, st.submitted);
  EXPECT_EQ(m.completed + m.dropped, m.arrived);
  EXPECT_GT(m.completed, 0);
  EXPECT_GT(internal, 0);  // the chaos did reach the validation
  EXPECT_GT(c.invalid_decisions, 0);
  EXPECT_LE(internal, st.submitted);
  EXPECT_EQ(c.stale_results, st.bogus);
  EXPECT_EQ(c.failed_results, st.failed);
  EXPECT_EQ(c.actions_sent, static_cast<int64_t>(exec.sent.size()));
  EXPECT_EQ(c.loads, static_cast<int64_t>(exec.Loads().size()));
  EXPECT_EQ(c.unloads, static_cast<int64_t>(exec.Unloads().size()));
  EXPECT_GT(c.requeued, 0);
  EXPECT_GT(c.loads, 0);
  EXPECT_EQ(static_cast<int64_t>(exec.sent.size()), st.answered);
  ExpectMemoryConsistent(e, suite);
  // Nothing ran on a worker after it retired, and retired workers hold no memory.
  for (const WorkerView& w : e.workers()) {
    if (w.phase != WorkerPhase::kRetired) continue;
    EXPECT_FALSE(w.busy);
    EXPECT_EQ(w.queue_length, 0u);
    for (Residency r : w.residency) EXPECT_EQ(r, Residency::kAbsent) << w.name;
  }
  EXPECT_FALSE(warnings.empty());
  EXPECT_LT(warnings.size(), 20u + static_cast<size_t>(steps) / 10) << "warnings are rate-limited";
}

TEST(MisbehavingPolicyTest, FuzzPerWorkerQueues) {
  for (uint32_t seed : {1u, 2u, 3u}) Fuzz(seed, /*shared=*/false, 4000);
}

TEST(MisbehavingPolicyTest, FuzzSharedQueue) {
  for (uint32_t seed : {4u, 5u}) Fuzz(seed, /*shared=*/true, 4000);
}

// The probe from issue 10: `take = {0, 0}` used to finish one query twice and strand
// another. Now the decision is rejected and the query named is dropped once as internal.
TEST(MisbehavingPolicyTest, TakeTheSamePositionTwice) {
  const ProfileSuite suite = FuzzSuite();
  PuppetExecutor exec;
  int calls = 0;
  PolicySet set = testing::MakeSet(
      testing::Route([](const Query&, const std::vector<WorkerView>&) { return WorkerId{2}; }),
      [&](const WorkerView&, const QueueView& q, TimePoint, BatchDecision* d) {
        d->Clear();
        d->kind = BatchDecision::Kind::kRun;
        d->variant = 0;
        if (calls++ == 0) {
          d->take = {0, 0};
        } else {
          for (uint32_t i = 0; i < q.size(); ++i) d->take.push_back(i);
        }
      });
  std::vector<WorkerSpec> workers(3);
  for (WorkerSpec& w : workers) w.hardware = 1;
  EngineOptions opts;
  std::vector<std::string> warnings;
  opts.log = [&](const std::string& line) { warnings.push_back(line); };
  opts.names.batching = "probe-batching";
  auto engine = Engine::Create(&suite, workers, std::move(set), &exec, opts, 1);
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  testing::RecordLog log;
  e.set_sink(log.Sink());
  Query q;
  q.deadline = kTimeZero + Millis(100);
  e.Submit(q, kTimeZero);
  ASSERT_EQ(log.records.size(), 1u);
  EXPECT_EQ(log.records[0].drop_reason, DropReason::kInternal);
  EXPECT_EQ(e.counters().invalid_decisions, 1);
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("probe-batching"), std::string::npos) << warnings[0];
  e.Submit(q, kTimeZero);
  ASSERT_EQ(exec.Runs().size(), 1u);
  exec.Answer(e, 0, kTimeZero + Millis(5));
  EXPECT_TRUE(log.EachEndedOnce(2));
  EXPECT_EQ(e.in_system(), 0u);
}

}  // namespace
}  // namespace sloserve

// The one driver (driver.h): its single order for same-time events, the same whether
// time is virtual (sim: a ManualClock) or real (serve: other threads post into the inbox,
// the driver's thread sleeps in WaitForWork and runs Step); offline jobs delivered after
// their virtual delay, or on the driver's thread after the pool ran them. Only manual
// clocks are read in assertions: no test depends on how long anything takes.
#include "sloserve/engine/driver.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sloserve/engine/clock.h"
#include "sloserve/engine/engine.h"
#include "support/multi_model_suite.h"
#include "support/puppet_executor.h"
#include "support/test_policies.h"
#include "support/test_suite.h"
#include "support/virtual_run.h"

namespace sloserve {
namespace {

using testing::PuppetExecutor;
using Trace = std::vector<std::string>;

// The instant at which everything is due in the same-instant tests: far enough in the
// future that, in real time, nothing becomes due by itself while the test sets up.
constexpr TimePoint kT = kTimeZero + Seconds(3600);

std::vector<WorkerSpec> TwoWorkers() {
  std::vector<WorkerSpec> w(2);
  w[0].name = "w0";
  w[1].name = "w1";
  return w;
}

// Policies that write every engine call they see into `trace`: dispatch by app (app k
// to worker k); batching runs the whole queue on "fast", except that worker 1's first
// decision is to wait until kT (so an engine timer is due at kT); every batch result and
// every plan tick are recorded too.
PolicySet TracingPolicies(Trace* trace) {
  auto waited = std::make_shared<bool>(false);
  return testing::MakeSet(
      testing::Route([](const Query& q, const std::vector<WorkerView>&) { return q.app; }),
      [trace, waited](const WorkerView& w, const QueueView& q, TimePoint, BatchDecision* d) {
        trace->push_back("next w" + std::to_string(w.id));
        d->Clear();
        if (w.id == 1 && !*waited) {
          *waited = true;
          d->kind = BatchDecision::Kind::kWaitUntil;
          d->wait_until = kT;
          return;
        }
        d->kind = BatchDecision::Kind::kRun;
        d->variant = 0;
        for (uint32_t i = 0; i < q.size(); ++i) d->take.push_back(i);
      },
      [trace](const PlanningInput&, DeploymentPlan*) { trace->push_back("plan"); }, {},
      [trace](const BatchCompletion& c) { trace->push_back("done w" + std::to_string(c.worker)); });
}

Driver::EngineStep Arrival(Trace* trace, AppId app) {
  return [trace, app](Engine& e, TimePoint now) {
    trace->push_back("arrival");
    Query q;
    q.app = app;
    q.deadline = now + Seconds(10);
    e.Submit(q, now);
  };
}

// One arrival at `at`, as the simulator's arrival source gives them.
class OneArrival : public ArrivalSource {
 public:
  OneArrival(TimePoint at, Driver::EngineStep admit) : at_(at), admit_(std::move(admit)) {}
  TimePoint NextArrival() const override { return at_; }
  void AdmitNext(Engine& engine, TimePoint now) override {
    at_ = kTimeInfinite;
    admit_(engine, now);
  }

 private:
  TimePoint at_;
  Driver::EngineStep admit_;
};

// Two workers with the tracing policies, offline jobs through `driver`, bound to it.
std::unique_ptr<Engine> TracingEngine(const ProfileSuite& suite, Driver* driver,
                                      PuppetExecutor* exec, Trace* trace) {
  EngineOptions eopts;
  eopts.submit_offline = driver->OfflineSubmitter();
  auto engine = Engine::Create(&suite, TwoWorkers(), TracingPolicies(trace), exec, eopts, 1);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  if (!engine.ok()) return nullptr;
  driver->Bind(engine->get(), exec);
  return std::move(*engine);
}

const Trace kSetup = {"arrival", "next w0", "arrival", "next w1"};
// The documented order: results, offline jobs, control messages, timers, the plan tick,
// arrivals (and what each causes, before the next item).
const Trace kAtT = {"done w0", "offline", "control", "next w1", "plan", "arrival", "next w0"};

struct SameInstant {
  Trace setup, at_t;
};

// Virtual time: everything due at kT is known to the driver in advance; one Step(kT),
// or (`simulator_loop`) the simulator's Driver::RunVirtual, which has no inbox items
// (so no control message).
SameInstant RunVirtual(bool simulator_loop = false) {
  SameInstant out;
  Trace trace;
  const ProfileSuite suite = testing::SmallSuite();
  DriverOptions opts;
  opts.plan_interval = kT - kTimeZero;  // the first tick is at kT
  opts.offline_delay = kT - kTimeZero;  // a job submitted at 0 publishes at kT
  Driver driver(opts);
  PuppetExecutor exec;
  auto engine = TracingEngine(suite, &driver, &exec, &trace);
  if (!engine) return out;
  ManualClock clock;

  driver.PostArrival(Arrival(&trace, 0));
  driver.PostArrival(Arrival(&trace, 1));
  driver.Step(clock.Now());
  out.setup = trace;
  trace.clear();
  EXPECT_EQ(exec.Runs().size(), 1u);
  if (exec.Runs().empty()) return out;

  // The simulated executor knows when its batch ends: kT.
  exec.sink()->PostAt(exec.Result(exec.Runs()[0], OkStatus(), clock.Now(), kT), kT);
  bool work_ran = false;
  driver.OfflineSubmitter()(OfflineJob{"job", [&] {
                                         work_ran = true;  // inline, at submission
                                         return [&] { trace.push_back("offline"); };
                                       }});
  EXPECT_TRUE(work_ran);
  OneArrival source(kT, Arrival(&trace, 0));
  driver.SetArrivals(&source);
  const TimePoint next = driver.NextDue();
  EXPECT_EQ(next, kT);
  if (simulator_loop) {
    EXPECT_EQ(driver.RunVirtual(&clock), 5);  // stops when only plan ticks are left
    EXPECT_EQ(clock.Now(), kT);
    out.at_t = trace;
    return out;
  }
  clock.Set(next);
  driver.PostControl([&](Engine&, TimePoint) { trace.push_back("control"); });
  EXPECT_EQ(driver.Step(clock.Now()), 6);
  out.at_t = trace;
  EXPECT_EQ(driver.NextDue(), kT + (kT - kTimeZero));  // only the next plan tick is left
  EXPECT_EQ(driver.offline_pending(), 0u);
  return out;
}

// Real time: the steady clock runs on its own; other threads post the result, the
// control message and the arrival into the inbox (in the reverse of the driver's order),
// the offline job finishes on the pool; the driver's thread waits in WaitForWork and then
// handles the instant kT with Step(kT), as it would when it woke late at kT.
SameInstant RunRealTime() {
  SameInstant out;
  Trace trace;
  const ProfileSuite suite = testing::SmallSuite();
  DriverOptions opts;
  opts.plan_interval = kT - kTimeZero;
  opts.offline_threads_enabled = true;
  opts.offline_threads = 2;
  Driver driver(opts);
  PuppetExecutor exec;
  auto engine = TracingEngine(suite, &driver, &exec, &trace);
  if (!engine) return out;
  const SteadyClock clock;

  std::thread frontend([&] {
    driver.PostArrival(Arrival(&trace, 0));
    driver.PostArrival(Arrival(&trace, 1));
  });
  frontend.join();
  driver.WaitForWork(clock, kTimeInfinite);
  driver.Step(clock.Now());
  out.setup = trace;
  trace.clear();
  EXPECT_EQ(exec.Runs().size(), 1u);
  if (exec.Runs().empty()) return out;

  // The offline job runs on the pool; WaitForWork returns once its result is in the inbox
  // (nothing else is due before kT, an hour of steady time away).
  std::atomic<bool> work_done{false};
  const std::thread::id driver_thread = std::this_thread::get_id();
  std::thread::id work_thread;
  driver.OfflineSubmitter()(OfflineJob{"job", [&] {
                                         work_thread = std::this_thread::get_id();
                                         work_done = true;
                                         return [&] {
                                           EXPECT_TRUE(work_done.load());
                                           EXPECT_EQ(std::this_thread::get_id(), driver_thread);
                                           trace.push_back("offline");
                                         };
                                       }});
  driver.WaitForWork(clock, kTimeInfinite);
  EXPECT_TRUE(work_done.load());
  EXPECT_TRUE(trace.empty());  // delivered only by Step, on this thread
  ActionResult result = exec.Result(exec.Runs()[0]);
  std::thread poster([&driver, &trace, result = std::move(result)]() mutable {
    driver.PostArrival(Arrival(&trace, 0));
    driver.PostControl([&trace](Engine&, TimePoint) { trace.push_back("control"); });
    driver.Post(std::move(result));
  });
  poster.join();
  driver.WaitForWork(clock, kTimeInfinite);
  EXPECT_EQ(driver.Step(kT), 6);
  EXPECT_NE(work_thread, driver_thread);
  out.at_t = trace;
  EXPECT_EQ(driver.offline_pending(), 0u);
  return out;
}

TEST(DriverTest, SameInstantEventsInTheDocumentedOrderInVirtualTime) {
  const SameInstant v = RunVirtual();
  EXPECT_EQ(v.setup, kSetup);
  EXPECT_EQ(v.at_t, kAtT);
}

TEST(DriverTest, TheSimulatorsLoopKeepsTheSameOrder) {
  const SameInstant loop = RunVirtual(/*simulator_loop=*/true);
  EXPECT_EQ(loop.setup, kSetup);
  Trace expected = kAtT;
  expected.erase(std::find(expected.begin(), expected.end(), "control"));
  EXPECT_EQ(loop.at_t, expected);
}

TEST(DriverTest, SameInstantEventsInTheSameOrderInRealTime) {
  const SameInstant r = RunRealTime();
  EXPECT_EQ(r.setup, kSetup);
  EXPECT_EQ(r.at_t, kAtT);
  const SameInstant v = RunVirtual();
  EXPECT_EQ(r.setup, v.setup);
  EXPECT_EQ(r.at_t, v.at_t);
}

// "After each handled item it starts again from 1": a result an arrival caused at the
// same instant (an executor that answers in no time) is handled before the next arrival.
TEST(DriverTest, AResultCausedAtAnInstantComesBeforeTheNextArrival) {
  const ProfileSuite suite = testing::SmallSuite();
  Trace trace;
  ServiceTimeOptions instant;
  instant.time_scale = 0;  // every action ends when it starts
  testing::VirtualRun run;
  ASSERT_TRUE(
      run.Start(&suite, TwoWorkers(),
                testing::MakeSet(
                    testing::Route(
                        [](const Query&, const std::vector<WorkerView>&) { return WorkerId{0}; }),
                    [&](const WorkerView& w, const QueueView& q, TimePoint, BatchDecision* d) {
                      trace.push_back("next w" + std::to_string(w.id) + " q" +
                                      std::to_string(q.size()));
                      testing::TakeFront(8, 0)(w, q, TimePoint{}, d);
                    },
                    {}, {},
                    [&](const BatchCompletion& c) {
                      trace.push_back("done " + std::to_string(c.requests.size()));
                    }),
                nullptr, {}, 1, instant)
          .ok());
  run.RunUntil(kTimeZero + Millis(5));
  run.driver().PostArrival(Arrival(&trace, 0));
  run.driver().PostArrival(Arrival(&trace, 0));
  run.driver().Step(run.now());
  // Without the restart, the second arrival would queue behind the first batch and the
  // two would finish as one batch of 2.
  EXPECT_EQ(trace, (Trace{"arrival", "next w0 q1", "done 1", "arrival", "next w0 q1", "done 1"}));
  EXPECT_EQ(run.engine().in_system(), 0u);
}

// Offline jobs in virtual time: the work runs at submission, its publish step exactly
// offline_delay later in the driver's time, and not before.
class JobBatching : public BatchingPolicy {
 public:
  explicit JobBatching(const ManualClock* clock) : clock_(clock) {}
  Status Init(const PolicyContext& ctx) override {
    submit_ = ctx.submit_offline;
    return submit_ ? OkStatus() : FailedPreconditionError("no submit_offline");
  }
  void NextBatch(const WorkerView& w, const QueueView& q, TimePoint now,
                 BatchDecision* d) override {
    if (!submitted) {
      submitted = true;
      submit_(OfflineJob{"generate", [this, now] {
                           work_at = now;
                           work_clock = clock_->Now();
                           return [this] { published_at = clock_->Now(); };
                         }});
    }
    testing::TakeFront(8, 0)(w, q, now, d);
  }
  bool submitted = false;
  TimePoint work_at{kTimeInfinite}, work_clock{kTimeInfinite}, published_at{kTimeInfinite};

 private:
  const ManualClock* clock_;
  std::function<void(OfflineJob)> submit_;
};

TEST(DriverTest, AVirtualOfflineJobPublishesAfterItsDelayAndNotBefore) {
  const ProfileSuite suite = testing::SmallSuite();
  DriverOptions opts;
  opts.offline_delay = Millis(50);
  testing::VirtualRun run(opts);
  PolicySet set = testing::MakeSet(
      testing::Route([](const Query&, const std::vector<WorkerView>&) { return WorkerId{0}; }),
      testing::TakeFront(1, 0));
  auto policy = std::make_unique<JobBatching>(&run.clock());
  JobBatching* job = policy.get();
  set.batching = std::move(policy);
  ASSERT_TRUE(run.Start(&suite, TwoWorkers(), std::move(set)).ok());
  Query q;
  q.deadline = kTimeZero + Seconds(1);
  run.Submit(q, kTimeZero + Millis(10));
  ASSERT_TRUE(job->submitted);
  EXPECT_EQ(job->work_at, kTimeZero + Millis(10));  // ran inline, at once
  EXPECT_EQ(run.driver().offline_pending(), 1u);
  run.RunUntil(kTimeZero + Millis(60) - Micros(1));
  EXPECT_EQ(job->published_at, kTimeInfinite) << "published before its delay";
  EXPECT_EQ(run.engine().in_system(), 0u);  // the batch (10 ms) came back meanwhile
  EXPECT_EQ(run.driver().NextDue(), kTimeZero + Millis(60));
  run.RunUntil(kTimeZero + Millis(60));
  EXPECT_EQ(job->published_at, kTimeZero + Millis(60));
  EXPECT_EQ(run.driver().offline_pending(), 0u);
  EXPECT_EQ(run.driver().NextDue(), kTimeInfinite);
}

// Thread-pool mode: the work runs on a pool thread; the publish step only on the driver's
// thread, in Step, after the work has finished.
TEST(DriverTest, APooledOfflineJobPublishesOnTheDriversThreadAfterItsWork) {
  const ProfileSuite suite = testing::SmallSuite();
  DriverOptions opts;
  opts.offline_threads_enabled = true;
  opts.offline_threads = 2;
  Driver driver(opts);
  PuppetExecutor exec;
  EngineOptions eopts;
  eopts.submit_offline = driver.OfflineSubmitter();
  auto engine = Engine::Create(
      &suite, TwoWorkers(), testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(1, 0)),
      &exec, eopts, 1);
  ASSERT_TRUE(engine.ok());
  driver.Bind(engine->get(), &exec);
  const SteadyClock clock;
  const std::thread::id driver_thread = std::this_thread::get_id();
  std::atomic<bool> first_done{false};
  std::atomic<int> works{0};
  std::thread::id work_thread, publish_thread;
  bool published = false, done_when_published = false;
  for (int i = 0; i < 3; ++i) {
    driver.OfflineSubmitter()(OfflineJob{"job", [&, i]() -> std::function<void()> {
                                           ++works;
                                           if (i != 0) return {};  // no publish step
                                           work_thread = std::this_thread::get_id();
                                           first_done = true;  // the work's last act
                                           return [&] {
                                             published = true;
                                             publish_thread = std::this_thread::get_id();
                                             done_when_published = first_done.load();
                                           };
                                         }});
  }
  EXPECT_EQ(driver.offline_pending(), 3u);
  while (driver.offline_pending() > 0) {
    driver.WaitForWork(clock, kTimeInfinite);
    driver.Step(clock.Now());
  }
  EXPECT_EQ(works.load(), 3);
  EXPECT_TRUE(published);
  EXPECT_TRUE(done_when_published);
  EXPECT_EQ(publish_thread, driver_thread);
  EXPECT_NE(work_thread, driver_thread);
}

// An executor that learns of a result when it happens posts it with Post(), even from
// inside Send (here: at once, on the driver's thread). Step starts again from its first
// step after each item, draining the inbox, so the result is handled in the same Step.
class PostingExecutor : public WorkerExecutor {
 public:
  Duration Send(const WorkerAction& a) override {
    ActionResult r;
    r.id = IdOf(a);
    r.worker = std::visit([](const auto& x) { return x.worker; }, a);
    sink_->Post(std::move(r));
    return Duration(0);
  }
};

// Starts `run` on two workers (round robin, one query a batch) with `exec`, its records
// going to `log`, and submits one query at 1 ms: one Step.
void SubmitOneQuery(const ProfileSuite& suite, WorkerExecutor* exec, testing::VirtualRun& run,
                    testing::RecordLog& log) {
  ASSERT_TRUE(run.Start(&suite, TwoWorkers(),
                        testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(1, 0)),
                        exec)
                  .ok());
  run.engine().set_sink(log.Sink());
  Query q;
  q.deadline = kTimeZero + Seconds(1);
  run.Submit(q, kTimeZero + Millis(1));
}

TEST(DriverTest, AResultPostedWhileAStepRunsIsHandledInThatStep) {
  const ProfileSuite suite = testing::SmallSuite();
  PostingExecutor exec;
  testing::VirtualRun run;
  testing::RecordLog log;
  // One Step: the arrival, then the posted result.
  ASSERT_NO_FATAL_FAILURE(SubmitOneQuery(suite, &exec, run, log));
  EXPECT_EQ(run.engine().in_system(), 0u);
  EXPECT_EQ(run.engine().actions_in_flight(), 0u);
  ASSERT_EQ(log.records.size(), 1u);
  EXPECT_EQ(log.records[0].finish, kTimeZero + Millis(1));
  EXPECT_EQ(run.driver().NextDue(), kTimeInfinite);
}

// As in serve: the thread that formed a batch is away while the batch runs (preempted by
// the worker thread it woke), and the result is posted before its step drains the inbox
// again. With the live clock (DriverOptions::clock) the result completes at its time, not
// at the instant its batch was formed (issue 35: ~0 service time for a third of serve's
// batches in experiments/real-digits).
class SlowPostingExecutor : public WorkerExecutor {
 public:
  explicit SlowPostingExecutor(ManualClock* live) : live_(live) {}
  Duration Send(const WorkerAction& a) override {
    ActionResult r;
    r.id = IdOf(a);
    r.worker = std::visit([](const auto& x) { return x.worker; }, a);
    r.begin = live_->Now();
    live_->Advance(Micros(400));  // the batch ran meanwhile
    r.end = live_->Now();
    sink_->Post(std::move(r));
    return Duration(0);
  }

 private:
  ManualClock* live_;
};

TEST(DriverTest, AResultPostedDuringAStepCompletesAtTheLiveClocksTime) {
  const ProfileSuite suite = testing::SmallSuite();
  for (const bool live : {false, true}) {
    ManualClock clock;
    clock.Set(kTimeZero + Millis(1));
    SlowPostingExecutor exec(&clock);
    DriverOptions options;
    if (live) options.clock = &clock;
    testing::VirtualRun run(options);
    testing::RecordLog log;
    // Formed at 1 ms, its result posted at 1.4 ms.
    ASSERT_NO_FATAL_FAILURE(SubmitOneQuery(suite, &exec, run, log));
    ASSERT_EQ(log.records.size(), 1u);
    EXPECT_EQ(log.records[0].start, kTimeZero + Millis(1));
    EXPECT_EQ(log.records[0].finish, live ? kTimeZero + Micros(1400) : kTimeZero + Millis(1))
        << (live ? "live clock" : "the step's time");
    EXPECT_EQ(log.records[0].exec_time, live ? Micros(400) : Duration(0));
  }
}

// An executor with a wait of its own, as remote workers' replies on a gRPC completion
// queue: results arrive from another thread into its queue (Arrive), and the driver's
// thread takes them out in WaitUntil or Poll and posts them from there. Records how the
// driver used it.
class WaitingExecutor : public PuppetExecutor, public ExecutorWait {
 public:
  ExecutorWait* TakeWait() override { return this; }

  // Another thread: a result arrives (a reply on the queue).
  void Arrive(ActionResult r) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    arrived_.push_back(std::move(r));
    cv_.NotifyAll();
  }
  // Another thread: blocks until the driver's thread sleeps in WaitUntil.
  void AwaitSleeper() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    cv_.Wait(mu_, [&]() REQUIRES(mu_) { return sleeping_; });
  }

  void WaitUntil(std::optional<std::chrono::steady_clock::time_point> deadline) override
      EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      ++waits_;
      deadlines_.push_back(deadline);
      sleeping_ = true;
      cv_.NotifyAll();
      auto ready = [&]() REQUIRES(mu_) { return woken_ || !arrived_.empty(); };
      if (deadline) {
        cv_.WaitUntil(mu_, *deadline, ready);
      } else {
        cv_.Wait(mu_, ready);
      }
      sleeping_ = false;
      woken_ = false;
    }
    Deliver();
  }
  void Poll() override EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      ++polls_;
    }
    Deliver();
  }
  void Wake() override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    ++wakes_;
    woken_ = true;
    cv_.NotifyAll();
  }

  int waits() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return waits_;
  }
  int polls() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return polls_;
  }
  int wakes() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return wakes_;
  }
  std::vector<std::optional<std::chrono::steady_clock::time_point>> deadlines() const
      EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return deadlines_;
  }

 private:
  // Posts what arrived, on the calling (driver's) thread, without holding mu_ (a Wake
  // from inside the post would deadlock: the driver must not wake its own thread).
  void Deliver() EXCLUDES(mu_) {
    std::vector<ActionResult> out;
    {
      MutexLock lock(mu_);
      out.swap(arrived_);
    }
    for (ActionResult& r : out) sink()->Post(std::move(r));
  }

  mutable Mutex mu_;
  CondVar cv_;
  std::vector<ActionResult> arrived_ GUARDED_BY(mu_);
  bool sleeping_ GUARDED_BY(mu_) = false;
  bool woken_ GUARDED_BY(mu_) = false;
  int waits_ GUARDED_BY(mu_) = 0;
  int polls_ GUARDED_BY(mu_) = 0;
  int wakes_ GUARDED_BY(mu_) = 0;
  std::vector<std::optional<std::chrono::steady_clock::time_point>> deadlines_ GUARDED_BY(mu_);
};

// A driver whose executor offers its wait, with nothing due before kT (a plan tick an
// hour away).
class DriverWaitTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(engine, nullptr); }

  static DriverOptions Options() {
    DriverOptions opts;
    opts.plan_interval = kT - kTimeZero;
    return opts;
  }

  Trace trace;
  const ProfileSuite suite = testing::SmallSuite();
  Driver driver{Options()};
  WaitingExecutor exec;
  std::unique_ptr<Engine> engine = TracingEngine(suite, &driver, &exec, &trace);
  const SteadyClock clock;
};

// With an executor's wait the driver's thread sleeps in it: an arrival posted from another
// thread wakes it there (one Wake), a result that arrives in the executor's queue is
// posted from the driver's thread inside the wait and handled by the next Step without
// another Wake (one wake-up per result), and a driver that does not sleep still takes the
// results already there (Poll).
TEST_F(DriverWaitTest, AnExecutorsWaitIsWhereTheDriverSleepsAndResultsArriveOnItsThread) {
  // Nothing due before kT (an hour away): the driver sleeps in the executor's wait until
  // an arrival's post wakes it.
  std::thread frontend([&] {
    exec.AwaitSleeper();
    driver.PostArrival(Arrival(&trace, 0));
  });
  driver.WaitForWork(clock, kTimeInfinite);
  frontend.join();
  EXPECT_EQ(exec.waits(), 1);
  EXPECT_EQ(exec.wakes(), 1);
  ASSERT_EQ(exec.deadlines().size(), 1u);
  // Its deadline: the plan tick at kT, kCoarseWait early.
  ASSERT_TRUE(exec.deadlines()[0].has_value());
  EXPECT_EQ(*exec.deadlines()[0], clock.ToSteady(kT - Driver::kCoarseWait));
  driver.Step(clock.Now());
  EXPECT_EQ(trace, (Trace{"arrival", "next w0"}));
  ASSERT_EQ(exec.Runs().size(), 1u);

  // The batch's result arrives in the executor's queue while the driver sleeps there:
  // posted on the driver's thread, it wakes nothing more.
  ActionResult result = exec.Result(exec.Runs()[0]);
  std::thread remote([this, result = std::move(result)]() mutable {
    exec.AwaitSleeper();
    exec.Arrive(std::move(result));
  });
  driver.WaitForWork(clock, kTimeInfinite);
  remote.join();
  EXPECT_EQ(exec.waits(), 2);
  EXPECT_EQ(exec.wakes(), 1);
  trace.clear();
  driver.Step(clock.Now());
  EXPECT_EQ(trace, (Trace{"done w0"}));
  EXPECT_EQ(engine->actions_in_flight(), 0u);

  // Work in the inbox: no sleep, but a Poll hands over what the executor holds (once
  // kPollInterval has passed since the executor's queue was last drained).
  std::this_thread::sleep_for(Driver::kPollInterval);
  driver.PostArrival(Arrival(&trace, 0));
  const int polls = exec.polls();
  driver.WaitForWork(clock, kTimeInfinite);
  EXPECT_EQ(exec.waits(), 2);
  EXPECT_EQ(exec.polls(), polls + 1);
}

// The executor's wait may keep its deadline coarsely (gRPC: to the millisecond, rounded
// up), so the driver gives it a deadline kCoarseWait early and waits for a deadline
// closer than that on its own condition variable (then Polls the executor; or, if that
// deadline has passed already, Polls since more than kPollInterval has).
TEST_F(DriverWaitTest, AnExecutorsWaitGetsItsDeadlineEarlyAndANearOneIsTheDriversOwn) {
  const TimePoint far = clock.Now() + Millis(200);
  driver.WaitForWork(clock, far);  // returns at the fake wait's deadline
  ASSERT_EQ(exec.deadlines().size(), 1u);
  ASSERT_TRUE(exec.deadlines()[0].has_value());
  EXPECT_EQ(*exec.deadlines()[0], clock.ToSteady(far - Driver::kCoarseWait));

  const int polls = exec.polls();
  const TimePoint near = clock.Now() + Driver::kCoarseWait - Micros(1);
  driver.WaitForWork(clock, near);
  EXPECT_EQ(exec.waits(), 1);  // not in the executor's wait
  EXPECT_EQ(exec.polls(), polls + 1);
}

// The plan tick comes every plan_interval of the driver's time, from Bind.
TEST(DriverTest, PlanTicksEveryIntervalAndOnlyWithAPlanningPolicy) {
  const ProfileSuite suite = testing::SmallSuite();
  std::vector<TimePoint> ticks;
  DriverOptions opts;
  opts.plan_interval = Millis(100);
  testing::VirtualRun run(opts);
  ASSERT_TRUE(run.Start(&suite, TwoWorkers(),
                        testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(1, 0),
                                         [&](const PlanningInput& in, DeploymentPlan*) {
                                           ticks.push_back(in.now);
                                         }))
                  .ok());
  run.RunUntil(kTimeZero + Millis(350));
  EXPECT_EQ(ticks, (std::vector<TimePoint>{kTimeZero + Millis(100), kTimeZero + Millis(200),
                                           kTimeZero + Millis(300)}));
  testing::VirtualRun none(opts);
  ASSERT_TRUE(none.Start(&suite, TwoWorkers(),
                         testing::MakeSet(testing::RoundRobinActive(), testing::TakeFront(1, 0)))
                  .ok());
  EXPECT_EQ(none.driver().NextDue(), kTimeInfinite);
}

// PlanningInput::recent_sizes holds the sizes of the deployment task's arrivals, oldest
// first: a server answers its suite's other models too, whose sizes are not the task's
// sample (Kairos' planning picks instances for the task's sizes).
TEST(DriverTest, RecentSizesAreTheDeploymentTasksArrivalsInOrder) {
  const ProfileSuite suite = testing::MultiModelSuite();
  const TaskId image = suite.FindTask("image").value(), text = suite.FindTask("text").value();
  std::vector<int32_t> seen;
  DriverOptions opts;
  opts.plan_interval = Millis(100);
  testing::VirtualRun run(opts);
  EngineOptions eopts;
  eopts.task = text;
  ASSERT_TRUE(
      run.Start(&suite, TwoWorkers(),
                testing::MakeSet(
                    testing::RoundRobinActive(),
                    testing::TakeFront(
                        1, [&](const Query& q) { return suite.MostAccurateVariant(q.task); }),
                    [&](const PlanningInput& in, DeploymentPlan*) {
                      seen.assign(in.recent_sizes.begin(), in.recent_sizes.end());
                    }),
                nullptr, eopts)
          .ok());
  for (int32_t i = 1; i <= 6; ++i) {
    Query q;
    q.task = i % 2 == 1 ? image : text;
    q.size = i;
    q.deadline = run.now() + Seconds(10);
    run.Submit(q, run.now());
  }
  run.RunUntil(kTimeZero + Millis(150));
  EXPECT_EQ(seen, (std::vector<int32_t>{2, 4, 6}));
}

// A planning policy that does not read the sizes gets none: the engine keeps no sample.
TEST(DriverTest, NoRecentSizesForAPlannerThatDoesNotReadThem) {
  const ProfileSuite suite = testing::MultiModelSuite();
  int ticks = 0;
  size_t sizes_seen = 0;
  DriverOptions opts;
  opts.plan_interval = Millis(100);
  testing::VirtualRun run(opts);
  PolicySet set = testing::MakeSet(
      testing::RoundRobinActive(),
      testing::TakeFront(1, [&](const Query& q) { return suite.MostAccurateVariant(q.task); }));
  set.planning = std::make_unique<testing::FnPlanning>(
      [&](const PlanningInput& in, DeploymentPlan*) {
        ++ticks;
        sizes_seen += in.recent_sizes.size();
      },
      /*reads_sizes=*/false);
  ASSERT_TRUE(run.Start(&suite, TwoWorkers(), std::move(set)).ok());
  for (int32_t i = 1; i <= 6; ++i) {
    Query q;
    q.task = suite.FindTask("image").value();
    q.size = i;
    q.deadline = run.now() + Seconds(10);
    run.Submit(q, run.now());
  }
  run.RunUntil(kTimeZero + Millis(150));
  EXPECT_EQ(ticks, 1);
  EXPECT_EQ(sizes_seen, 0u);
}

}  // namespace
}  // namespace sloserve

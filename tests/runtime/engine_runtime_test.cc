#include "sloserve/runtime/engine_runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/test_suite.h"

namespace sloserve {
namespace {

RuntimeOptions Options(int workers, double time_scale = 1.0) {
  RuntimeOptions o;
  o.deployment.workers = workers;
  o.policy.options["variant"] = "fast";
  o.service.time_scale = time_scale;
  return o;
}

InferOutcome SubmitAndWait(EngineRuntime& rt, InferRequest req) {
  std::promise<InferOutcome> p;
  auto f = p.get_future();
  rt.Submit(std::move(req), [&](InferOutcome o) { p.set_value(std::move(o)); });
  return f.get();
}

// Real timings, checked without assuming a fast machine: the emulated worker holds each
// batch at least its profiled time (a busy machine only adds to it), time_scale scales
// that time (compared between two runtimes, a 10x ratio), and met_slo is the deadline
// check on the reported times.
TEST(EngineRuntimeTest, AnswersWithTheVariantAndRealTimings) {
  ProfileSuite suite = testing::SmallSuite();
  auto rt = EngineRuntime::Create(&suite, Options(2));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  EXPECT_TRUE((*rt)->Ready());
  InferRequest req;
  req.task = "t";
  req.slo = Millis(100);
  auto t0 = std::chrono::steady_clock::now();
  InferOutcome out = SubmitAndWait(**rt, req);
  auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(out.variant, "fast");
  EXPECT_EQ(out.batch_size, 1);
  EXPECT_EQ(out.met_slo, out.queue_time + out.compute_time <= req.slo);
  // The emulated worker is held for the profiled 10 ms, and the caller waited for it.
  EXPECT_GE(out.compute_time, Millis(10));
  EXPECT_GE(waited, std::chrono::milliseconds(10));
  // A request whose SLO is shorter than the variant's latency is answered, late.
  req.slo = Millis(5);
  InferOutcome late = SubmitAndWait(**rt, req);
  ASSERT_TRUE(late.status.ok()) << late.status.ToString();
  EXPECT_GE(late.compute_time, Millis(10));
  EXPECT_FALSE(late.met_slo);
  // The executor's own measure of the batch is part of its compute time (the rest is the
  // hand-off); the final summary splits the latencies so, the published one does not.
  EXPECT_GE(out.exec_time, Duration(0));
  EXPECT_LE(out.exec_time, out.compute_time);
  (*rt)->Stop();
  EXPECT_FALSE((*rt)->Ready());
  EXPECT_EQ((*rt)->Summary().phases.count, 0);
  const MetricsSummary final_summary = (*rt)->FinalSummary();
  EXPECT_EQ(final_summary.phases.count, 2);
  EXPECT_EQ(final_summary.completed, 2);
  EXPECT_GE(final_summary.phases.exec.max_ms, 0.0);

  // time_scale 10: the same batch holds its worker for 100 ms.
  auto scaled = EngineRuntime::Create(&suite, Options(2, /*time_scale=*/10.0));
  ASSERT_TRUE(scaled.ok()) << scaled.status().ToString();
  (*scaled)->Start();
  req.slo = Seconds(10);
  InferOutcome slow = SubmitAndWait(**scaled, req);
  ASSERT_TRUE(slow.status.ok()) << slow.status.ToString();
  EXPECT_GE(slow.compute_time, Millis(100));
  // The unscaled batch took its 10 ms, not the scaled 100 ms: a 10x gap that only a
  // 90 ms stall of the engine thread could close.
  EXPECT_LT(out.compute_time, slow.compute_time);
  (*scaled)->Stop();
}

TEST(EngineRuntimeTest, ConcurrentSubmittersAreEachAnsweredExactlyOnce) {
  ProfileSuite suite = testing::SmallSuite();
  auto rt = EngineRuntime::Create(&suite, Options(4, /*time_scale=*/0.05));
  ASSERT_TRUE(rt.ok());
  (*rt)->Start();
  constexpr int kThreads = 4, kPerThread = 500;
  std::atomic<int> answered{0}, ok{0};
  std::vector<std::atomic<int>> calls(kThreads * kPerThread);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        InferRequest req;
        req.task = "t";
        req.slo = Millis(500);
        int idx = t * kPerThread + i;
        (*rt)->Submit(req, [&, idx](InferOutcome o) {
          calls[static_cast<size_t>(idx)]++;
          if (o.status.ok()) ok++;
          answered++;
        });
      }
    });
  }
  for (auto& th : threads) th.join();
  (*rt)->Stop(Seconds(120));  // returns once everything is answered; the grace is a bound
  EXPECT_EQ(answered.load(), kThreads * kPerThread);
  for (auto& c : calls) ASSERT_EQ(c.load(), 1);
  EXPECT_EQ(ok.load(), kThreads * kPerThread);
  MetricsSummary m = (*rt)->Summary();
  EXPECT_EQ(m.arrived, kThreads * kPerThread);
  EXPECT_GT(m.mean_batch_size, 1.0);  // bursts are batched
  // The same numbers reach Prometheus through GET /metrics.
  std::string prom = (*rt)->PrometheusMetrics();
  EXPECT_NE(prom.find("sloserve_queries_arrived_total " + std::to_string(kThreads * kPerThread)),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("sloserve_queries_finished_total{outcome=\"dropped\"} 0"), std::string::npos);
  EXPECT_NE(prom.find("# TYPE sloserve_active_workers gauge"), std::string::npos);
}

// SubmitAll (the HTTP server's hand-off of one event-loop turn) answers every request of
// every batch exactly once, as Submit would: served, refused by the engine (unknown
// model), and after Stop() refused at once; the batch is left empty each time.
TEST(EngineRuntimeTest, SubmitAllAnswersEachRequestOfABatchExactlyOnce) {
  ProfileSuite suite = testing::SmallSuite();
  auto rt = EngineRuntime::Create(&suite, Options(4, /*time_scale=*/0.05));
  ASSERT_TRUE(rt.ok());
  (*rt)->Start();
  constexpr int kThreads = 2, kBatches = 50, kPerBatch = 8;
  constexpr int kTotal = kThreads * kBatches * kPerBatch;
  std::vector<std::atomic<int>> calls(kTotal + kPerBatch);
  std::atomic<int> ok{0}, not_found{0};
  auto batch_of = [&](int first, const char* task) {
    std::vector<InferenceBackend::Submission> batch;
    for (int i = first; i < first + kPerBatch; ++i) {
      InferRequest req;
      req.task = task;
      req.slo = Millis(500);
      batch.push_back({std::move(req), [&, i](InferOutcome o) {
                         calls[static_cast<size_t>(i)]++;
                         if (o.status.ok()) ok++;
                         if (o.status.code() == StatusCode::kNotFound) not_found++;
                       }});
    }
    return batch;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        const int first = (t * kBatches + b) * kPerBatch;
        auto batch = batch_of(first, b % 10 == 9 ? "no-such-model" : "t");
        (*rt)->SubmitAll(batch);
        EXPECT_TRUE(batch.empty());
      }
    });
  }
  for (auto& th : threads) th.join();
  (*rt)->Stop(Seconds(120));  // returns once everything is answered; the grace is a bound
  for (int i = 0; i < kTotal; ++i) ASSERT_EQ(calls[static_cast<size_t>(i)].load(), 1) << i;
  const int unknown = kThreads * (kBatches / 10) * kPerBatch;
  EXPECT_EQ(not_found.load(), unknown);
  EXPECT_EQ(ok.load(), kTotal - unknown);
  EXPECT_EQ((*rt)->Summary().arrived, kTotal - unknown);
  // Stopped: each request of a batch is refused at once, once.
  auto late = batch_of(kTotal, "t");
  (*rt)->SubmitAll(late);
  EXPECT_TRUE(late.empty());
  for (int i = kTotal; i < kTotal + kPerBatch; ++i) {
    EXPECT_EQ(calls[static_cast<size_t>(i)].load(), 1) << i;
  }
  EXPECT_EQ(ok.load(), kTotal - unknown);
}

// Summary() and /metrics read the snapshot the engine thread publishes between its steps
// while it serves (no lock shared with the scrape, no wait for a step): scrapes during a
// stream of requests each get an answer, their counts never go back, and the last one
// after Stop() has every request.
TEST(EngineRuntimeTest, ScrapesWhileServingAreAnsweredAndMonotone) {
  ProfileSuite suite = testing::SmallSuite();
  auto rt = EngineRuntime::Create(&suite, Options(4, /*time_scale=*/0.02));
  ASSERT_TRUE(rt.ok());
  EXPECT_EQ((*rt)->Summary().arrived, 0);  // not started: taken on the caller's thread
  (*rt)->Start();
  constexpr int kRequests = 600;
  std::atomic<int> answered{0};
  std::atomic<bool> done{false};
  std::atomic<int> scrapes{0};
  bool monotone = true, complete = true;
  std::thread scraper([&] {
    int64_t last = 0;
    while (!done.load()) {
      const MetricsSummary m = (*rt)->Summary();
      monotone = monotone && m.arrived >= last;
      last = m.arrived;
      complete = complete && (*rt)->PrometheusMetrics().find("sloserve_queries_arrived_total ") !=
                                 std::string::npos;
      ++scrapes;
    }
  });
  for (int i = 0; i < kRequests; ++i) {
    InferRequest req;
    req.task = "t";
    req.slo = Seconds(5);
    (*rt)->Submit(req, [&](InferOutcome) { answered++; });
    if (i % 100 == 99) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Whenever the scraper thread gets to run: a few scrapes of the serving runtime.
  while (answered.load() < kRequests || scrapes.load() < 3)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  done = true;
  scraper.join();
  (*rt)->Stop();
  EXPECT_EQ(answered.load(), kRequests);
  EXPECT_TRUE(monotone);
  EXPECT_TRUE(complete);
  const MetricsSummary m = (*rt)->Summary();  // stopped: on the caller's thread again
  EXPECT_EQ(m.arrived, kRequests);
  EXPECT_EQ(m.completed, kRequests);
}

TEST(EngineRuntimeTest, OverloadIsRejectedClearlyAndStopAnswersEverything) {
  ProfileSuite suite = testing::SmallSuite();
  // One worker holding each batch 50 ms and a queue bound of 5: a burst of 50 overflows
  // unless the submitting loop were stalled for most of a second.
  RuntimeOptions o = Options(1, /*time_scale=*/5.0);
  o.max_queue = 5;
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok());
  (*rt)->Start();
  std::atomic<int> answered{0}, full{0}, unavailable{0};
  for (int i = 0; i < 50; ++i) {
    InferRequest req;
    req.task = "t";
    req.slo = Seconds(10);
    (*rt)->Submit(req, [&](InferOutcome out) {
      if (out.status.code() == StatusCode::kResourceExhausted) full++;
      if (out.status.code() == StatusCode::kUnavailable) unavailable++;
      answered++;
    });
  }
  (*rt)->Stop(Duration(0));  // no grace: queued requests get UNAVAILABLE
  EXPECT_EQ(answered.load(), 50);
  EXPECT_GT(full.load(), 0);
  // After Stop, new requests are refused at once.
  InferRequest late;
  late.task = "t";
  EXPECT_EQ(SubmitAndWait(**rt, late).status.code(), StatusCode::kUnavailable);
}

// The value of the Prometheus sample `series` (name and labels) in `prom`; -1 if absent.
double Sample(const std::string& prom, const std::string& series) {
  const size_t at = prom.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(prom.substr(at + series.size() + 2));
}

// A request for the test suite's task "t".
InferRequest TaskRequest(Duration slo, int32_t priority) {
  InferRequest req;
  req.task = "t";
  req.slo = slo;
  req.priority = priority;
  return req;
}

// GET /metrics reports shed requests per priority level and reason (issue 16): every level
// of engine.priority_levels is there (at 0 until used), and the level the requests asked
// for carries exactly the requests answered 429.
TEST(EngineRuntimeTest, ShedRequestsAreReportedPerPriorityLevel) {
  ProfileSuite suite = testing::SmallSuite();
  RuntimeOptions o = Options(1, /*time_scale=*/5.0);  // 50 ms batches
  o.max_queue = 5;
  o.admission.enabled = true;
  o.admission.priority_levels = 3;
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  constexpr int kRequests = 50;
  std::atomic<int> answered{0}, refused{0};
  for (int i = 0; i < kRequests; ++i) {
    InferRequest req = TaskRequest(Seconds(10), 2);
    (*rt)->Submit(req, [&](InferOutcome out) {
      if (out.status.code() == StatusCode::kResourceExhausted) refused++;
      answered++;
    });
  }
  (*rt)->Stop(Seconds(120));  // returns once everything is answered; the grace is a bound
  ASSERT_EQ(answered.load(), kRequests);
  ASSERT_GT(refused.load(), 0);
  const std::string prom = (*rt)->PrometheusMetrics();
  const std::string shed = "sloserve_queries_shed_by_priority_total";
  EXPECT_EQ(Sample(prom, shed + "{priority=\"2\",reason=\"shed\"}") +
                Sample(prom, shed + "{priority=\"2\",reason=\"queue_full\"}"),
            refused.load())
      << prom;
  for (const char* level : {"1", "3"}) {
    for (const char* reason : {"shed", "queue_full"}) {
      EXPECT_EQ(Sample(prom, shed + "{priority=\"" + level + "\",reason=\"" + reason + "\"}"), 0)
          << level << " " << reason;
    }
    EXPECT_EQ(Sample(prom, std::string("sloserve_queries_ended_by_priority_total{priority=\"") +
                               level + "\"}"),
              0);
  }
  EXPECT_EQ(Sample(prom, "sloserve_queries_ended_by_priority_total{priority=\"2\"}"), kRequests);
  EXPECT_EQ(Sample(prom, "sloserve_queries_met_by_priority_total{priority=\"2\"}"),
            static_cast<double>((*rt)->Summary().met));
  EXPECT_EQ(prom.find("priority=\"4\""), std::string::npos);  // the label set is the levels
  EXPECT_EQ(Sample(prom, "sloserve_queries_shed_total"), refused.load());
}

// Early shedding (issue 16, runtime/early_shed.h): once admission refuses every query of
// a level, Submit refuses a request of that level on the caller's thread (no hand-off to
// the engine), with the engine's answer, and counts it like the engine's own sheds. A
// request with a longer SLO than the deployment's might still be admitted: the engine
// decides. The timing is generous: batches run 20x their profiled time, so the queue that
// refuses level 2 takes seconds to drain.
TEST(EngineRuntimeTest, OverloadShedsOnTheCallersThreadAndCountsIt) {
  ProfileSuite suite = testing::SmallSuite();
  RuntimeOptions o = Options(1, /*time_scale=*/20.0);
  o.deployment.slo = Seconds(1);  // admission lets about 250 rows wait, level 2 half of them
  o.admission.enabled = true;
  o.admission.priority_levels = 2;
  // The thread that answers tells an early refusal from the engine's: no engine steps on
  // the caller's thread (inline_step_runtime_test.cc has those).
  o.inline_steps = false;
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  std::promise<void> first_shed;
  std::atomic<bool> shed_seen{false};
  std::atomic<int> answered{0};
  constexpr int kBurst = 600;
  for (int i = 0; i < kBurst; ++i) {
    InferRequest req = TaskRequest(Seconds(1), 1);
    (*rt)->Submit(req, [&](InferOutcome out) {
      if (out.status.code() == StatusCode::kResourceExhausted && !shed_seen.exchange(true))
        first_shed.set_value();
      answered++;
    });
  }
  // The step that shed published admission's state before its answers went out.
  first_shed.get_future().wait();
  const std::thread::id caller = std::this_thread::get_id();
  constexpr int kLow = 20;
  for (int i = 0; i < kLow; ++i) {
    InferRequest req = TaskRequest(Seconds(1), 2);
    std::thread::id answered_on;
    InferOutcome got;
    (*rt)->Submit(req, [&](InferOutcome out) {
      answered_on = std::this_thread::get_id();
      got = std::move(out);
      answered++;
    });
    EXPECT_EQ(answered_on, caller) << "request " << i << " went to the engine";
    EXPECT_EQ(got.status.code(), StatusCode::kResourceExhausted) << got.status.ToString();
    ASSERT_NE(got.reason, nullptr);
    EXPECT_STREQ(got.reason, "shed");
  }
  // A longer or a shorter SLO than the deployment's: not refused early, whatever the
  // queue (a longer one may be admitted on its wait, a shorter one may be too tight for
  // the batches, which admission leaves to its batch to decide).
  std::promise<std::thread::id> long_slo, short_slo;
  (*rt)->Submit(TaskRequest(Seconds(60), 2), [&](InferOutcome) {
    long_slo.set_value(std::this_thread::get_id());
    answered++;
  });
  (*rt)->Submit(TaskRequest(Millis(500), 2), [&](InferOutcome) {
    short_slo.set_value(std::this_thread::get_id());
    answered++;
  });
  (*rt)->Stop(Duration(0));
  EXPECT_NE(long_slo.get_future().get(), caller);
  EXPECT_NE(short_slo.get_future().get(), caller);
  EXPECT_EQ(answered.load(), kBurst + kLow + 2);
  const MetricsSummary m = (*rt)->Summary();
  EXPECT_EQ(m.arrived, kBurst + kLow + 2);  // the early-shed ones count as arrived and shed
  EXPECT_EQ(m.admitted, m.arrived - m.shed);
  ASSERT_EQ(m.priorities.size(), 2u);
  // Per level, ended queries: Stop(0) abandons the running batch (at most 8 of the burst).
  EXPECT_LE(m.priorities[0].arrived, kBurst);
  EXPECT_GE(m.priorities[0].arrived, kBurst - 8);
  EXPECT_EQ(m.priorities[1].arrived, kLow + 2);
  EXPECT_GE(m.priorities[1].shed, kLow);
  const std::string prom = (*rt)->PrometheusMetrics();
  EXPECT_GE(Sample(prom, "sloserve_queries_shed_early_total"), kLow) << prom;
  EXPECT_EQ(Sample(prom, "sloserve_queries_shed_total"), static_cast<double>(m.shed));
  EXPECT_EQ(Sample(prom, "sloserve_queries_ended_by_priority_total{priority=\"2\"}"), kLow + 2);
  EXPECT_EQ(Sample(prom, "sloserve_queries_arrived_total"), static_cast<double>(m.arrived));
}

// An executor whose batches never finish (a hung worker): Stop() must not wait for them.
class HungExecutor : public WorkerExecutor {
 public:
  Duration Send(const WorkerAction&) override { return Millis(10); }
};

// Stop() is bounded (issue 16 item 3): queued work has the grace, running batches the
// grace again; then their queries are answered 503 with a clear error. Without the bound
// this test hangs (and ctest's timeout fails it).
TEST(EngineRuntimeTest, StopAbandonsBatchesStillRunningAfterTheGrace) {
  ProfileSuite suite = testing::SmallSuite();
  RuntimeOptions o = Options(1);
  o.admission.enabled = false;
  o.make_executor = [](const ProfileSuite&, PayloadStore*) -> std::unique_ptr<WorkerExecutor> {
    return std::make_unique<HungExecutor>();
  };
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  std::atomic<int> answered{0}, unavailable{0};
  std::string messages;  // queued ones are dropped ("shutting down"), running ones abandoned
  std::mutex mu;
  for (int i = 0; i < 5; ++i) {
    InferRequest req;
    req.task = "t";
    req.slo = Seconds(10);
    (*rt)->Submit(req, [&](InferOutcome out) {
      if (out.status.code() == StatusCode::kUnavailable) {
        unavailable++;
        std::lock_guard<std::mutex> lock(mu);
        messages += out.status.message() + "\n";
      }
      answered++;
    });
  }
  while ((*rt)->Summary().arrived < 5) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  (*rt)->Stop(Millis(50));
  EXPECT_EQ(answered.load(), 5);
  EXPECT_EQ(unavailable.load(), 5);
  EXPECT_NE(messages.find("the shutdown drain time ran out"), std::string::npos) << messages;
}

// Workers the test takes down and brings back as a remote executor's health checks do
// (ResultSink::PostReachability, from the test's thread). Batches are answered at once,
// or with `hold` kept until their worker goes down, which fails them as a remote
// worker's cancelled calls are failed.
class ReachabilityExecutor : public WorkerExecutor {
 public:
  Duration Send(const WorkerAction& action) override {
    ActionResult r;
    r.id = IdOf(action);
    r.worker = std::visit([](const auto& a) { return a.worker; }, action);
    r.begin = r.end = clock_.Now();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (hold_ && std::holds_alternative<RunBatch>(action)) {
        held_.push_back(std::move(r));
        return Millis(10);
      }
    }
    sink_->Post(std::move(r));
    return Millis(10);
  }
  void Hold(bool hold) {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = hold;
  }
  size_t held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_.size();
  }
  // Worker w goes down (its held batches fail with it) or comes back.
  void SetReachable(WorkerId w, bool reachable) {
    std::vector<ActionResult> lost;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = held_.begin(); it != held_.end();) {
        if (reachable || it->worker != w) {
          ++it;
          continue;
        }
        it->status = UnavailableError("remote worker lost");
        lost.push_back(std::move(*it));
        it = held_.erase(it);
      }
    }
    if (lost.empty()) sink_->PostReachability(w, reachable);
    for (ActionResult& r : lost) sink_->PostReachability(w, reachable, std::move(r));
  }

 private:
  SteadyClock clock_;
  std::mutex mu_;
  bool hold_ = false;
  std::vector<ActionResult> held_;
};

// With every worker down (docs/remote-workers.md, "Failures") the server is not ready,
// says why, and refuses new requests at once (on the caller's thread, never reaching the
// engine) instead of queueing them until their deadline; a request accepted before ends
// exactly once; readiness and service return when a worker rejoins.
TEST(EngineRuntimeTest, NotReadyAndRefusingWhileEveryWorkerIsUnreachable) {
  ProfileSuite suite = testing::SmallSuite();
  RuntimeOptions o = Options(2);
  o.admission.enabled = false;
  ReachabilityExecutor* executor = nullptr;
  o.make_executor = [&](const ProfileSuite&, PayloadStore*) -> std::unique_ptr<WorkerExecutor> {
    auto e = std::make_unique<ReachabilityExecutor>();
    executor = e.get();
    return e;
  };
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  InferRequest req;
  req.task = "t";
  req.slo = Seconds(5);
  ASSERT_TRUE(SubmitAndWait(**rt, req).status.ok());
  EXPECT_TRUE((*rt)->Ready());
  EXPECT_EQ((*rt)->ReadyNote(), "");

  // A request accepted while both are up, held by its worker when both go down.
  executor->Hold(true);
  std::atomic<int> held_answers{0};
  std::promise<InferOutcome> held_outcome;
  (*rt)->Submit(req, [&](InferOutcome out) {
    if (held_answers.fetch_add(1) == 0) held_outcome.set_value(std::move(out));
  });
  while (executor->held() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  executor->SetReachable(0, false);
  EXPECT_TRUE((*rt)->Ready());  // one worker left
  EXPECT_EQ((*rt)->ReadyNote(), "1 of 2 remote workers down");
  executor->SetReachable(1, false);
  EXPECT_FALSE((*rt)->Ready());
  EXPECT_EQ((*rt)->NotReadyReason(), "no worker reachable: 2 of 2 remote workers down");

  // Refused before Submit returns, with the reason.
  bool refused = false;
  (*rt)->Submit(req, [&](InferOutcome out) {
    EXPECT_EQ(out.status.code(), StatusCode::kUnavailable);
    EXPECT_EQ(out.status.message(), "no worker reachable: 2 of 2 remote workers down; retry later");
    refused = true;
  });
  EXPECT_TRUE(refused);
  // The held request was re-queued, found no worker, and ended at its deadline.
  auto held = held_outcome.get_future();
  ASSERT_EQ(held.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  // Failed with its worker and re-queued, it found no worker and ended at once, saying so
  // (not an internal error of the scheduler, nor waiting in the queue for good).
  const Status held_status = held.get().status;
  EXPECT_EQ(held_status.code(), StatusCode::kUnavailable) << held_status.ToString();
  EXPECT_EQ(held_status.message(), "no worker reachable: 2 of 2 remote workers down; retry later");
  EXPECT_EQ((*rt)->Summary().arrived, 2);  // the refused one never reached the engine

  // w1 rejoins: ready again, and it serves.
  executor->Hold(false);
  executor->SetReachable(1, true);
  EXPECT_TRUE((*rt)->Ready());
  EXPECT_EQ((*rt)->NotReadyReason(), "");
  InferOutcome served = SubmitAndWait(**rt, req);
  ASSERT_TRUE(served.status.ok()) << served.status.ToString();
  EXPECT_EQ(served.worker, "w1");
  (*rt)->Stop();
  EXPECT_EQ(held_answers.load(), 1);
}

// `serve` shares the engine's completion path: ORLOJ learning online from the emulated
// executor's times alone answers every request (known apps, and one it cannot learn).
TEST(EngineRuntimeTest, OrlojWithOnlineProfileAnswersEveryRequest) {
  auto suite =
      LoadSuite(std::string(SLOSERVE_SOURCE_DIR) + "/experiments/orloj/profiles/bimodal-std1.prof");
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
  RuntimeOptions o;
  o.deployment.workers = 2;
  o.policy.batching = "orloj";
  o.policy.options = {
      {"online_profile", "true"}, {"profile_refresh_s", "0.01"}, {"profile_min_samples", "5"}};
  o.service.time_scale = 0.02;  // batches of 1-2 ms
  auto rt = EngineRuntime::Create(&*suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  std::atomic<int> answered{0}, ok{0};
  for (int i = 0; i < 300; ++i) {
    InferRequest req;
    req.task = "generate";
    // A third with a name of their own (a client's choice): one shared unprofiled app.
    req.app = i % 3 == 2 ? "nosuch-" + std::to_string(i) : "app" + std::to_string(i % 3);
    req.slo = Seconds(10);
    (*rt)->Submit(req, [&](InferOutcome out) {
      if (out.status.ok()) ok++;
      answered++;
    });
    if (i % 20 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  (*rt)->Stop(Seconds(120));  // returns once everything is answered
  EXPECT_EQ(answered.load(), 300);
  EXPECT_EQ(ok.load(), 300);
  // The 100 "nosuch-*" requests ran on the pooled distribution, and /metrics says so.
  EXPECT_NE((*rt)->PrometheusMetrics().find("\nsloserve_unknown_app_queries_total 100\n"),
            std::string::npos);
}

TEST(EngineRuntimeTest, UnknownTaskAndBadConfigAreErrors) {
  ProfileSuite suite = testing::SmallSuite();
  auto rt = EngineRuntime::Create(&suite, Options(1));
  ASSERT_TRUE(rt.ok());
  (*rt)->Start();
  InferRequest req;
  req.task = "nope";
  EXPECT_EQ(SubmitAndWait(**rt, req).status.code(), StatusCode::kNotFound);
  (*rt)->Stop();
  RuntimeOptions bad = Options(1);
  bad.deployment.slo = Micros(10);  // faster than any variant
  auto r2 = EngineRuntime::Create(&suite, bad);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("impossible SLO"), std::string::npos);
}

}  // namespace
}  // namespace sloserve

// Issue 33 item 5: a planner that takes 500 ms delays neither the answers to requests nor
// a /metrics scrape. Its solve runs off the engine thread (PolicyContext::submit_offline,
// the rule for planners), so requests are answered while it runs; and a scrape reads the
// snapshot the engine thread published, so even a planner that breaks the rule and
// solves on the engine thread does not hold a scrape. Nothing here reads a clock: each
// test checks that what it waited for came while the solve was still running (which
// ends when the test releases it, or after 500 ms on its own).
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>

#include "sloserve/core/mutex.h"
#include "sloserve/runtime/engine_runtime.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

// The solve: starts, then ends when released or after 500 ms.
class SlowSolve {
 public:
  void Run() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    started_ = true;
    cv_.NotifyAll();
    cv_.WaitFor(mu_, std::chrono::milliseconds(500), [this]() REQUIRES(mu_) { return released_; });
    finished_ = true;
  }
  // Waits (up to a minute) until a solve started; false if none did.
  bool WaitStarted() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return cv_.WaitFor(mu_, std::chrono::seconds(60), [this]() REQUIRES(mu_) { return started_; });
  }
  void Release() EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      released_ = true;
    }
    cv_.NotifyAll();
  }
  bool finished() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return finished_;
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  bool started_ GUARDED_BY(mu_) = false;
  bool released_ GUARDED_BY(mu_) = false;
  bool finished_ GUARDED_BY(mu_) = false;
};

// Solves once, at its first plan tick: as an offline job (`offline`), or right there on
// the engine thread. Its plan changes nothing.
class SlowPlanner : public PlanningPolicy {
 public:
  SlowPlanner(std::shared_ptr<SlowSolve> solve, bool offline)
      : solve_(std::move(solve)), offline_(offline) {}
  Status Init(const PolicyContext& ctx) override {
    submit_ = ctx.submit_offline;
    if (offline_ && !submit_) return FailedPreconditionError("no offline jobs here");
    return OkStatus();
  }
  void Plan(const PlanningInput&, DeploymentPlan*) override {
    if (planned_) return;
    planned_ = true;
    if (!offline_) return solve_->Run();
    submit_(OfflineJob{"slow solve", [solve = solve_]() -> std::function<void()> {
                         solve->Run();
                         return [] {};  // the plan, applied at the engine's next step
                       }});
  }

 private:
  std::shared_ptr<SlowSolve> solve_;
  bool offline_;
  std::function<void(OfflineJob)> submit_;
  bool planned_ = false;
};

std::unique_ptr<EngineRuntime> StartWithSlowPlanner(const ProfileSuite& suite,
                                                    std::shared_ptr<SlowSolve> solve,
                                                    bool offline) {
  RuntimeOptions o;
  o.deployment.workers = 2;
  o.policy.options["variant"] = "fast";
  o.service.time_scale = 0.02;  // 0.2 ms batches
  o.plan_interval = Millis(10);
  o.make_planning = [solve, offline] { return std::make_unique<SlowPlanner>(solve, offline); };
  auto rt = EngineRuntime::Create(&suite, o);
  EXPECT_TRUE(rt.ok()) << rt.status().ToString();
  if (!rt.ok()) return nullptr;
  (*rt)->Start();
  return std::move(*rt);
}

InferOutcome AnswerOne(EngineRuntime& rt) {
  InferRequest req;
  req.task = "t";
  req.slo = Seconds(5);
  std::promise<InferOutcome> p;
  auto f = p.get_future();
  rt.Submit(std::move(req), [&](InferOutcome o) { p.set_value(std::move(o)); });
  return f.get();
}

TEST(SlowPlannerRuntimeTest, RequestsAndScrapesAreAnsweredWhileTheSolveRuns) {
  const ProfileSuite suite = testing::SmallSuite();
  auto solve = std::make_shared<SlowSolve>();
  auto rt = StartWithSlowPlanner(suite, solve, /*offline=*/true);
  ASSERT_NE(rt, nullptr);
  ASSERT_TRUE(solve->WaitStarted());
  constexpr int kRequests = 20;
  for (int i = 0; i < kRequests; ++i) {
    const InferOutcome out = AnswerOne(*rt);
    EXPECT_TRUE(out.status.ok()) << out.status.ToString();
  }
  const std::string metrics = rt->PrometheusMetrics();
  EXPECT_FALSE(solve->finished()) << "answers waited for the solve";
  EXPECT_NE(metrics.find("sloserve_queries_arrived_total"), std::string::npos);
  EXPECT_EQ(rt->Summary().completed, kRequests) << "each answer counted before it went out";
  solve->Release();
  rt->Stop();
}

TEST(SlowPlannerRuntimeTest, AScrapeDoesNotWaitForAPlannerOnTheEngineThread) {
  const ProfileSuite suite = testing::SmallSuite();
  auto solve = std::make_shared<SlowSolve>();
  auto rt = StartWithSlowPlanner(suite, solve, /*offline=*/false);
  ASSERT_NE(rt, nullptr);
  ASSERT_TRUE(solve->WaitStarted());  // the engine thread is inside Plan now
  const std::string metrics = rt->PrometheusMetrics();
  const MetricsSummary summary = rt->Summary();
  EXPECT_FALSE(solve->finished()) << "the scrape waited for the engine's step";
  EXPECT_NE(metrics.find("sloserve_queries_arrived_total"), std::string::npos);
  EXPECT_EQ(summary.arrived, 0);
  solve->Release();
  EXPECT_TRUE(AnswerOne(*rt).status.ok());
  rt->Stop();
}

}  // namespace
}  // namespace sloserve

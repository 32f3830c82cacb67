// The engine's batch-completion hook (BatchingPolicy::OnBatchComplete): once per finished
// batch, with the batch's requests and the execution times alone the simulated executor
// drew for them (what ORLOJ's online profiler learns from).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sloserve/engine/engine.h"
#include "sloserve/exec/profile_executor.h"
#include "sloserve/policy/policy_spec.h"
#include "sloserve/profile/exec_time_model.h"
#include "support/test_suite.h"
#include "support/virtual_run.h"

namespace sloserve {
namespace {

// SmallSuite with execution-time histograms for "fast" only ("slow" stays static): app
// "a" uniform on [5, 15) ms, app "b" uniform on [40, 60) ms.
ProfileSuite DynamicSmallSuite() {
  ProfileSuite s = testing::SmallSuite();
  const VariantId fast = *s.FindVariant("fast");
  s.AddExecHistogram(ExecHistogram{"a", fast, Millis(10), Millis(5), {1}});
  s.AddExecHistogram(ExecHistogram{"b", fast, Millis(20), Millis(40), {1}});
  return s;
}

// Runs up to 4 queries from the front on `variant` and keeps every completion it is told.
class RecordingBatching : public BatchingPolicy {
 public:
  struct Seen {
    BatchCompletion c;
    std::vector<CompletedRequest> requests;  // copied: the span dies with the call
  };
  explicit RecordingBatching(VariantId v) : variant_(v) {}
  void NextBatch(const WorkerView&, const QueueView& queue, TimePoint,
                 BatchDecision* out) override {
    out->Clear();
    for (uint32_t i = 0; i < queue.size() && i < 4; ++i) out->take.push_back(i);
    out->kind = BatchDecision::Kind::kRun;
    out->variant = variant_;
  }
  void OnBatchComplete(const BatchCompletion& c) override {
    seen.push_back({c, {c.requests.begin(), c.requests.end()}});
  }
  std::vector<Seen> seen;

 private:
  VariantId variant_;
};

// The profile executor, remembering what each RunBatch ran and what its result reported
// (it sits between the executor and the driver's sink).
class RecordingExecutor : public WorkerExecutor, public ResultSink {
 public:
  struct Launched {
    WorkerId worker;
    std::vector<QueryId> ids;
    std::vector<AppId> apps;
    std::vector<Duration> solo;
    Duration duration;
  };
  explicit RecordingExecutor(const ProfileSuite* suite)
      : inner(ServiceTimeModel(suite, {}, /*seed=*/5)) {
    inner.Attach(this);
  }
  Duration Send(const WorkerAction& a) override {
    const auto* run = std::get_if<RunBatch>(&a);
    if (run) {
      Launched l{run->worker, {}, {}, {}, Duration(0)};
      for (const Query& q : run->queries) {
        l.ids.push_back(q.id);
        l.apps.push_back(q.app);
      }
      by_action_[run->id] = l.ids.front();
      launched[l.ids.front()] = l;
    }
    const Duration d = inner.Send(a);
    if (run) launched[by_action_[run->id]].duration = d;
    return d;
  }
  void PostAt(ActionResult&& r, TimePoint at) override {
    auto it = by_action_.find(r.id);
    if (it != by_action_.end()) launched[it->second].solo = r.solo;
    sink_->PostAt(std::move(r), at);
  }
  void Post(ActionResult r) override { sink_->Post(std::move(r)); }

  ProfileExecutor inner;
  std::map<QueryId, Launched> launched;  // by the batch's first query

 private:
  std::map<ActionId, QueryId> by_action_;
};

struct Driven {
  std::unique_ptr<RecordingExecutor> exec;
  std::unique_ptr<testing::VirtualRun> run;
  RecordingBatching* policy = nullptr;
  Engine& engine() { return run->engine(); }
};

// 400 queries (apps a, b and an unknown one in turn) on two workers, 3 ms apart, every
// result delivered in time order by the driver, as the simulator does.
Driven Drive(const ProfileSuite& suite, VariantId v) {
  Driven run;
  run.exec = std::make_unique<RecordingExecutor>(&suite);
  run.run = std::make_unique<testing::VirtualRun>();
  PolicySpec spec;
  spec.options = {{"variant", "fast"}};
  auto set = MakePolicySet(spec);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  auto policy = std::make_unique<RecordingBatching>(v);
  run.policy = policy.get();
  set->batching = std::move(policy);
  std::vector<WorkerSpec> workers(2);
  Status started = run.run->Start(&suite, workers, std::move(set).value(), run.exec.get());
  EXPECT_TRUE(started.ok()) << started.ToString();
  TimePoint now = kTimeZero;
  for (int i = 0; i < 400; ++i) {
    now += Millis(3);
    Query q;
    q.app = static_cast<AppId>(i % 3);
    q.deadline = now + Seconds(10);
    run.run->Submit(q, now);
  }
  run.run->RunToEnd();
  return run;
}

TEST(BatchCompletionTest, OncePerBatchWithItsRequestsAndTheirTimesAlone) {
  const ProfileSuite suite = DynamicSmallSuite();
  const VariantId fast = *suite.FindVariant("fast");
  Driven run = Drive(suite, fast);
  const auto& seen = run.policy->seen;
  const MetricsSummary m = run.engine().Summarize(kTimeZero + Seconds(100));
  ASSERT_EQ(m.completed, 400);
  EXPECT_EQ(static_cast<int64_t>(seen.size()), m.batches);
  ASSERT_EQ(seen.size(), run.exec->launched.size());
  EXPECT_GT(m.mean_batch_size, 1.5);  // the queue builds up: real batches, not singletons

  const ExecTimeTable exec = ExecTimeTable::Build(suite);
  const BatchTimeModel model = FitBatchTimeModel(suite, 0, fast, exec.Pooled(fast).Mean()).value();
  size_t requests = 0;
  for (const auto& [c, reqs] : seen) {
    ASSERT_FALSE(reqs.empty());
    auto it = run.exec->launched.find(reqs[0].id);
    ASSERT_NE(it, run.exec->launched.end());
    const RecordingExecutor::Launched* l = &it->second;
    EXPECT_EQ(c.worker, l->worker);
    EXPECT_EQ(c.variant, fast);
    EXPECT_EQ(c.hardware, 0u);
    EXPECT_EQ(c.duration, l->duration);
    ASSERT_EQ(reqs.size(), l->ids.size());
    ASSERT_EQ(l->solo.size(), l->ids.size());
    double longest = 0;
    for (size_t i = 0; i < reqs.size(); ++i) {
      EXPECT_EQ(reqs[i].id, l->ids[i]);
      EXPECT_EQ(reqs[i].app, l->apps[i]);
      EXPECT_EQ(reqs[i].solo, l->solo[i]);
      // Drawn from the app's histogram (the unknown app from the pooled one).
      const ExecCdf& c_app = exec.ForAppOrPooled(fast, reqs[i].app, nullptr);
      const double us = static_cast<double>(reqs[i].solo.count());
      EXPECT_GE(us, c_app.Min() - 1);
      EXPECT_LE(us, c_app.Max() + 1);
      longest = std::max(longest, us);
    }
    // l_B = c0 + c1 k max l_r, up to the rounding of the reported times.
    const int k = static_cast<int>(reqs.size());
    EXPECT_NEAR(static_cast<double>(c.duration.count()), model.BatchUs(k, longest),
                model.c1 * k + 1.0);
    requests += reqs.size();
  }
  EXPECT_EQ(requests, 400u);
}

TEST(BatchCompletionTest, StaticModelsReportNoTimesAlone) {
  const ProfileSuite suite = DynamicSmallSuite();
  Driven run = Drive(suite, *suite.FindVariant("slow"));
  ASSERT_FALSE(run.policy->seen.empty());
  size_t requests = 0;
  for (const auto& [c, reqs] : run.policy->seen) {
    for (const CompletedRequest& r : reqs) EXPECT_LT(r.solo.count(), 0);
    requests += reqs.size();
  }
  EXPECT_EQ(requests, 400u);
}

}  // namespace
}  // namespace sloserve

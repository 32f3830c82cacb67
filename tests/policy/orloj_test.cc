// ORLOJ: execution-time model, priority structure, scheduler; baselines.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "policy/policy_test_util.h"
#include "sloserve/policy/batching/clipper.h"
#include "sloserve/policy/batching/clockwork.h"
#include "sloserve/policy/batching/nexus.h"
#include "sloserve/policy/batching/orloj.h"
#include "sloserve/policy/batching/orloj_queue.h"
#include "sloserve/policy/selection/fixed.h"
#include "sloserve/profile/exec_time_model.h"
#include "sloserve/profile/online_exec_table.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

using testing::QueueFixture;

using testing::DynamicSuite;

// --- execution-time model ---

TEST(ExecCdfTest, HistogramCdfQuantileMean) {
  auto c = ExecCdf::FromHistogram(1000, 500, {0, 1, 3, 0}).value();  // [1500, 2500)
  EXPECT_DOUBLE_EQ(c.Min(), 1500);
  EXPECT_DOUBLE_EQ(c.Max(), 2500);
  EXPECT_DOUBLE_EQ(c.Cdf(2000), 0.25);
  EXPECT_DOUBLE_EQ(c.Quantile(0.25), 2000);
  EXPECT_DOUBLE_EQ(c.Mean(), 0.25 * 1750 + 0.75 * 2250);
  EXPECT_DOUBLE_EQ(ExecCdf::Constant(7).Mean(), 7);
  EXPECT_DOUBLE_EQ(ExecCdf::Constant(7).Cdf(7), 1);
  EXPECT_DOUBLE_EQ(ExecCdf::Constant(7).Cdf(6.99), 0);
}

TEST(ExecCdfTest, BadInputIsAnError) {
  EXPECT_FALSE(ExecCdf::FromHistogram(0, 100, {0, 0}).ok());  // no samples
  EXPECT_FALSE(ExecCdf::FromHistogram(0, 100, {}).ok());
  EXPECT_FALSE(ExecCdf::FromHistogram(0, 0, {1}).ok());
  EXPECT_FALSE(ExecCdf::FromHistogram(0, 10, {1, -1}).ok());
  EXPECT_FALSE(ExecCdf::FromSamples({}, 8).ok());
  EXPECT_FALSE(ExecCdf::MaxOf({}).ok());
}

TEST(ExecCdfTest, MaxOfMixedAppsMatchesMonteCarlo) {
  auto a = ExecCdf::FromHistogram(10000, 5000, {1, 2, 1}).value();
  auto b = ExecCdf::FromHistogram(30000, 10000, {3, 1}).value();
  auto pooled = ExecCdf::Mixture({&a, &b}, {1, 1}).value();
  for (int k : {1, 2, 5}) {
    auto mx = ExecCdf::MaxOf({{&a, 1}, {&pooled, k}}).value();
    Rng rng = MakeRng(7, "mc");
    double sum = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
      double m = a.Sample(rng);
      for (int j = 0; j < k; ++j) m = std::max(m, pooled.Sample(rng));
      sum += m;
    }
    EXPECT_NEAR(mx.Mean(), sum / n, 0.005 * sum / n) << "k=" << k;
    // The CDF at a knot is the exact product of CDFs.
    EXPECT_NEAR(mx.Cdf(35000), a.Cdf(35000) * std::pow(pooled.Cdf(35000), k), 1e-12);
  }
}

TEST(ExecCdfTest, FitBatchTimeModelRecoversLinearProfile) {
  ProfileSuite s = DynamicSuite();
  auto m = FitBatchTimeModel(s, 0, 0, 40000).value();
  EXPECT_NEAR(m.c0_us, 20000, 1e-6);
  EXPECT_NEAR(m.c1 * 40000, 10000, 1e-6);
  EXPECT_FALSE(FitBatchTimeModel(s, 0, 0, 0).ok());
}

TEST(ExecTimeTableTest, AppsPooledUnknownAndEmptyHistograms) {
  ProfileSuite s = DynamicSuite();
  s.AddExecHistogram(ExecHistogram{"empty", 0, Millis(1), Millis(1), {0, 0}});
  ExecTimeTable t = ExecTimeTable::Build(s);
  ASSERT_EQ(t.apps(), (std::vector<std::string>{"short", "long", "empty"}));
  ASSERT_EQ(t.warnings().size(), 1u);  // the all-zero histogram is ignored, and said so
  EXPECT_TRUE(t.IsDynamic(0));
  EXPECT_NE(t.ForApp(0, 0), nullptr);
  EXPECT_EQ(t.ForApp(0, 2), nullptr);
  bool unknown = false;
  EXPECT_NEAR(t.ForAppOrPooled(0, 99, &unknown).Mean(), (15000 + 60000) / 2.0, 1e-6);
  EXPECT_TRUE(unknown);
}

TEST(OnlineExecProfilerTest, SamplesWindowsAndResets) {
  EXPECT_FALSE(OnlineExecProfiler::Create({0, Seconds(1), 8, 1}).ok());
  auto p = OnlineExecProfiler::Create({2, Seconds(10), 8, 5}).value();
  for (int i = 0; i < 20; ++i) p.Record(0, Millis(10 + i % 2), kTimeZero + Millis(i));
  EXPECT_EQ(p.buffered(), 10u);  // 1 in 2
  EXPECT_EQ(p.Snapshot(0), nullptr);
  p.Refresh(kTimeZero + Seconds(1));  // first histogram as soon as there are 5 samples
  ASSERT_NE(p.Snapshot(0), nullptr);
  EXPECT_NEAR(p.Snapshot(0)->Mean(), 10000, 1000);
  // Drift: the next window sees 50 ms requests; the snapshot changes at the reset only.
  for (int i = 0; i < 20; ++i) p.Record(0, Millis(50), kTimeZero + Seconds(2));
  p.Refresh(kTimeZero + Seconds(5));
  EXPECT_LT(p.Snapshot(0)->Mean(), 20000);
  p.Refresh(kTimeZero + Seconds(11));
  EXPECT_GT(p.Snapshot(0)->Mean(), 20000);
  EXPECT_EQ(p.Snapshot(3), nullptr);
}

TEST(OnlineExecTableTest, LearnedHistogramsReplaceOfflineOnesWithEnoughSamples) {
  ProfileSuite s = DynamicSuite();
  auto t = OnlineExecTable::Create(ExecTimeTable::Build(s), {1, Seconds(10), 16, 20}).value();
  const double pooled_before = t.table().Pooled(0).Mean();
  // App 0 ("short", offline 15 ms mean) now takes 30 ms; app 1 gets too few samples.
  for (int i = 0; i < 25; ++i) t.Record(0, 0, Millis(29 + i % 3), kTimeZero + Millis(i));
  for (int i = 0; i < 5; ++i) t.Record(0, 1, Millis(90), kTimeZero + Millis(i));
  t.Record(0, 7, Millis(1), kTimeZero);   // unknown app: not learned
  t.Record(0, 0, Micros(-1), kTimeZero);  // no time alone (static model): ignored
  t.Record(3, 0, Millis(1), kTimeZero);   // no such variant: ignored
  EXPECT_EQ(t.recorded(), 30);
  EXPECT_NEAR(t.table().ForApp(0, 0)->Mean(), 15000, 1);  // nothing learned before Refresh
  EXPECT_TRUE(t.Refresh(kTimeZero + Seconds(1)));
  EXPECT_EQ(t.learned_pairs(), 1);
  EXPECT_NEAR(t.table().ForApp(0, 0)->Mean(), 30000, 1000);
  EXPECT_NEAR(t.table().ForApp(0, 1)->Mean(), 60000, 1);  // offline kept
  EXPECT_NEAR(t.table().Pooled(0).Mean(), pooled_before + 7500, 600);
  EXPECT_NEAR(t.offline().ForApp(0, 0)->Mean(), 15000, 1);
  EXPECT_FALSE(t.Refresh(kTimeZero + Seconds(2)));  // nothing new before the window ends
  EXPECT_FALSE(OnlineExecTable::Create(ExecTimeTable::Build(s), {1, Seconds(0), 16, 20}).ok());
}

// --- priority structure ---

TEST(KineticMaxQueueTest, MatchesNaiveScanOnRandomOperations) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng = MakeRng(seed, "kinetic");
    KineticMaxQueue q(2);
    std::map<KineticMaxQueue::Handle, std::pair<double, double>> live;
    std::map<KineticMaxQueue::Handle, uint64_t> tags;
    double x = 1;
    uint64_t next_tag = 0;
    for (int op = 0; op < 3000; ++op) {
      const double u = Uniform01(rng);
      auto random_line = [&] {
        double a = Uniform01(rng) * 2 - 1, b = Uniform01(rng) * 4 - 2;
        if (Uniform01(rng) < 0.1) a = std::round(a * 4) / 4;  // exact ties now and then
        return std::make_pair(a, b);
      };
      if (u < 0.4 || live.empty()) {
        auto [a, b] = random_line();
        auto h = q.Insert(a, b, next_tag);
        live[h] = {a, b};
        tags[h] = next_tag++;
      } else if (u < 0.6) {
        auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
        auto [a, b] = random_line();
        q.Update(it->first, a, b);
        it->second = {a, b};
      } else if (u < 0.8) {
        auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
        q.Erase(it->first);
        tags.erase(it->first);
        live.erase(it);
      } else if (u < 0.82) {  // re-base
        const double f = 1 + Uniform01(rng) * 3;
        q.Rescale(f, 1.0);
        for (auto& [h, ab] : live) ab.first *= f;
        x = 1;
      } else {
        x += Uniform01(rng) * (Uniform01(rng) < 0.2 ? 5 : 0.05);
      }
      ASSERT_EQ(q.size(), live.size());
      auto best = q.Best(x);
      if (live.empty()) {
        EXPECT_EQ(best, KineticMaxQueue::kInvalid);
        continue;
      }
      double top = -1e300;
      uint64_t top_tag = 0;
      for (auto& [h, ab] : live) {
        const double v = ab.first * x + ab.second;
        if (v > top || (v == top && tags[h] < top_tag)) {
          top = v;
          top_tag = tags[h];
        }
      }
      ASSERT_NE(best, KineticMaxQueue::kInvalid);
      ASSERT_EQ(q.Score(best, x), top) << "seed " << seed << " op " << op;
    }
  }
}

// --- the ORLOJ scheduler ---

std::unique_ptr<BatchingPolicy> MakeBatching(const std::string& name, const ProfileSuite& suite,
                                             std::map<std::string, std::string> opts,
                                             int workers = 1) {
  PolicyParams params("t", std::move(opts));
  auto sel = FixedSelection::Create(params).value();
  StatusOr<std::unique_ptr<BatchingPolicy>> b =
      name == "orloj"       ? OrlojBatching::Create(params, std::move(sel))
      : name == "clockwork" ? ClockworkBatching::Create(params, std::move(sel))
      : name == "nexus"     ? NexusBatching::Create(params, std::move(sel))
                            : ClipperBatching::Create(params, std::move(sel));
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.workers = testing::MakeWorkers(workers, suite.variants().size());
  EXPECT_TRUE((*b)->Init(ctx).ok());
  return *std::move(b);
}

struct Fixture {
  QueueFixture q;
  std::unique_ptr<BatchingPolicy> policy;
  void Add(int64_t arrival_ms, int64_t slo_ms, AppId app) {
    q.Add(arrival_ms, slo_ms);
    q.table.back().app = app;
    policy->OnArrival(q.table.back(), q.table.back().arrival);
  }
};

TEST(OrlojBatchingTest, RunsLargestFillableBatchAndDropsHopelessRequests) {
  ProfileSuite s = DynamicSuite();
  Fixture f;
  f.policy = MakeBatching("orloj", s, {});
  for (int i = 0; i < 5; ++i) f.Add(0, 1000, i % 2);  // plenty of slack
  f.Add(0, 5, 0);                                     // 5 ms: not even a batch of one fits
  f.Add(0, 1000, 7);                                  // an app without a histogram
  WorkerView w;
  BatchDecision d;
  f.policy->NextBatch(w, f.q.View(), kTimeZero, &d);
  ASSERT_EQ(d.kind, BatchDecision::Kind::kRun);
  EXPECT_EQ(d.take.size(), 4u);                   // sizes {1,2,4,8}: 6 feasible -> a batch of 4
  EXPECT_EQ(d.drop, (std::vector<uint32_t>{0}));  // the 5 ms request sorts first
  auto* orloj = static_cast<OrlojBatching*>(f.policy.get());
  EXPECT_EQ(orloj->unknown_app_queries(), 1);
  EXPECT_EQ(orloj->timed_out(), 1);
  EXPECT_EQ(orloj->tracked(0), 2u);
}

TEST(OrlojBatchingTest, PrefersUrgentRequestsAndKeepsStateAcrossCalls) {
  ProfileSuite s = DynamicSuite();
  Fixture f;
  f.policy = MakeBatching("orloj", s, {{"max_batch", "1"}});
  f.Add(0, 2000, 0);
  f.Add(0, 300, 1);  // a long request close to its deadline
  f.Add(0, 2000, 0);
  WorkerView w;
  BatchDecision d;
  f.policy->NextBatch(w, f.q.View(), kTimeZero + Millis(100), &d);
  ASSERT_EQ(d.take.size(), 1u);
  EXPECT_EQ(f.q.View().at(d.take[0]).deadline, kTimeZero + Millis(300));
  // Remove it as the engine would, then the next call takes one of the others.
  f.q.slots.erase(f.q.slots.begin() + d.take[0]);
  f.policy->NextBatch(w, f.q.View(), kTimeZero + Millis(200), &d);
  ASSERT_EQ(d.take.size(), 1u);
  EXPECT_EQ(static_cast<OrlojBatching*>(f.policy.get())->tracked(0), 1u);
}

TEST(OrlojBatchingTest, StaticModelAndExecTimesBeyondEverySlo) {
  ProfileSuite s = DynamicSuite(/*with_hist=*/false);
  Fixture f;
  f.policy = MakeBatching("orloj", s, {});
  for (int i = 0; i < 3; ++i) f.Add(0, 25, 0);  // lat(1) = 30 ms > 25 ms SLO: hopeless
  WorkerView w;
  BatchDecision d;
  f.policy->NextBatch(w, f.q.View(), kTimeZero, &d);
  EXPECT_EQ(d.kind, BatchDecision::Kind::kIdle);
  EXPECT_EQ(d.drop.size(), 3u);
}

TEST(OrlojBatchingTest, RebuildsWhenQueriesWereNeverAnnounced) {
  ProfileSuite s = DynamicSuite();
  Fixture f;
  f.policy = MakeBatching("orloj", s, {});
  f.q.Add(0, 1000);  // no OnArrival
  f.q.Add(0, 1000);
  WorkerView w;
  BatchDecision d;
  f.policy->NextBatch(w, f.q.View(), kTimeZero, &d);
  EXPECT_EQ(d.take.size(), 2u);
}

TEST(OrlojBatchingTest, OptionsAreValidated) {
  PolicyParams ok("t", {{"cost_steps", "0:1,50:0.5"}, {"b", "0.001"}});
  EXPECT_TRUE(OrlojBatching::Create(ok, FixedSelection::Create(ok).value()).ok());
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{{"b", "0"},
                                                                      {"b", "abc"},
                                                                      {"feasible_quantile", "2"},
                                                                      {"score_bins", "0"},
                                                                      {"cost_steps", "1"},
                                                                      {"cost_steps", "0:-1"},
                                                                      {"cost_steps", ""}}) {
    PolicyParams p("t", {{k, v}});
    EXPECT_FALSE(OrlojBatching::Create(p, FixedSelection::Create(p).value()).ok()) << k << v;
  }
  // The online profile's options: each error names the option.
  PolicyParams online("t", {{"online_profile", "true"},
                            {"profile_refresh_s", "0.5"},
                            {"profile_window_s", "30"},
                            {"profile_sample_every", "2"},
                            {"profile_min_samples", "10"},
                            {"profile_bins", "32"},
                            {"offline_scale", "1,3"}});
  EXPECT_TRUE(OrlojBatching::Create(online, FixedSelection::Create(online).value()).ok());
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{{"online_profile", "maybe"},
                                                                      {"profile_refresh_s", "0"},
                                                                      {"profile_window_s", "-1"},
                                                                      {"profile_window_s", "x"},
                                                                      {"profile_sample_every", "0"},
                                                                      {"profile_min_samples", "0"},
                                                                      {"profile_bins", "2000"},
                                                                      {"offline_scale", "1,0"},
                                                                      {"offline_scale", "1,,2"},
                                                                      {"offline_scale", ""}}) {
    PolicyParams p("t", {{"online_profile", k == "online_profile" ? v : "true"}, {k, v}});
    auto b = OrlojBatching::Create(p, FixedSelection::Create(p).value());
    ASSERT_FALSE(b.ok()) << k << "=" << v;
    EXPECT_NE(b.status().message().find(k), std::string::npos) << b.status().ToString();
  }
  // A profiler option without the profiler is a mistake, not silently ignored.
  PolicyParams stray("t", {{"profile_window_s", "30"}});
  auto b = OrlojBatching::Create(stray, FixedSelection::Create(stray).value());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), "orloj: option 'profile_window_s' needs online_profile: true");
}

TEST(OrlojBatchingTest, OfflineScaleAndOnlineProfileNeedExecHistograms) {
  for (auto [dyn, opts, want] :
       std::vector<std::tuple<bool, std::map<std::string, std::string>, std::string>>{
           {true, {{"offline_scale", "1,2,3"}}, "3 factors for a suite with 2 exec_hist apps"},
           {false, {{"offline_scale", "2"}}, "0 exec_hist apps"},
           {false, {{"online_profile", "true"}}, "online_profile needs exec_hist records"}}) {
    ProfileSuite s = DynamicSuite(dyn);
    PolicyParams p("t", opts);
    auto b = OrlojBatching::Create(p, FixedSelection::Create(p).value());
    ASSERT_TRUE(b.ok());
    PolicyContext ctx;
    ctx.suite = &s;
    ctx.workers = testing::MakeWorkers(1, s.variants().size());
    Status st = (*b)->Init(ctx);
    ASSERT_FALSE(st.ok()) << want;
    EXPECT_NE(st.message().find(want), std::string::npos) << st.ToString();
  }
  // One factor scales every app; the executor-facing suite is untouched.
  ProfileSuite s = DynamicSuite();
  auto b = MakeBatching("orloj", s, {{"offline_scale", "3"}});
  const auto* orloj = static_cast<const OrlojBatching*>(b.get());
  EXPECT_NEAR(orloj->exec_times().ForApp(0, 0)->Mean(), 45000, 1);
  EXPECT_NEAR(orloj->exec_times().ForApp(0, 1)->Mean(), 180000, 1);
  EXPECT_EQ(orloj->online_profile(), nullptr);
}

// Completions feed the profiler; the score tables are rebuilt only when it publishes (here:
// the first 20 samples of each app, then each 10 s window), not per completion or decision,
// and the worker's bookkeeping re-registers its queue consistently afterwards.
TEST(OrlojBatchingTest, OnlineProfileRebuildsOnlyWhenTheProfilerPublishes) {
  ProfileSuite s = DynamicSuite();
  Fixture f;
  f.policy = MakeBatching("orloj", s,
                          {{"online_profile", "true"},
                           {"profile_refresh_s", "1"},
                           {"profile_window_s", "10"},
                           {"profile_min_samples", "20"}});
  auto* orloj = static_cast<OrlojBatching*>(f.policy.get());
  ASSERT_NE(orloj->online_profile(), nullptr);
  for (int i = 0; i < 200; ++i) f.Add(0, 100000, i % 2);
  WorkerView w;
  BatchDecision d;
  f.policy->NextBatch(w, f.q.View(), kTimeZero, &d);  // builds the offline tables
  // Both apps truly take 35 ms alone.
  std::vector<CompletedRequest> reqs;
  for (int i = 0; i < 4; ++i) reqs.push_back({0, static_cast<AppId>(i % 2), Millis(35)});
  int calls = 0;
  for (int64_t ms = 10; ms <= 25000; ms += 10) {  // a batch of 4 finishes every 10 ms
    BatchCompletion c;
    c.now = kTimeZero + Millis(ms);
    c.variant = 0;
    c.requests = reqs;
    f.policy->OnBatchComplete(c);
    ++calls;
  }
  EXPECT_EQ(calls, 2500);
  // First snapshots at the first refresh with 20 samples per app, then at the window
  // resets at 10 s and 20 s.
  EXPECT_EQ(orloj->profile_rebuilds(), 3);
  EXPECT_EQ(orloj->online_profile()->learned_pairs(), 2);
  EXPECT_NEAR(orloj->exec_times().ForApp(0, 0)->Mean(), 35000, 1);
  EXPECT_NEAR(orloj->exec_times().ForApp(0, 1)->Mean(), 35000, 1);
  EXPECT_NEAR(orloj->exec_times().Pooled(0).Mean(), 35000, 1);
  // The queued requests are re-registered with the new tables on the next decision.
  for (int round = 0; round < 3 && !f.q.slots.empty(); ++round) {
    f.policy->NextBatch(w, f.q.View(), kTimeZero + Seconds(26 + round), &d);
    ASSERT_EQ(d.kind, BatchDecision::Kind::kRun);
    std::vector<uint32_t> gone = d.take;
    gone.insert(gone.end(), d.drop.begin(), d.drop.end());
    std::sort(gone.rbegin(), gone.rend());
    for (uint32_t p : gone) f.q.slots.erase(f.q.slots.begin() + p);
    EXPECT_EQ(orloj->tracked(0), f.q.slots.size());
  }
}

class OrlojDrainTest : public ::testing::TestWithParam<std::map<std::string, std::string>> {};

// Drains 2,000 queued requests decision by decision: every request is served or dropped
// exactly once and the policy's bookkeeping matches the queue. b = 5 per ms re-bases the
// time origin every 60 ms of virtual time.
TEST_P(OrlojDrainTest, LargeQueuesStayConsistent) {
  ProfileSuite s = DynamicSuite();
  Fixture f;
  f.policy = MakeBatching("orloj", s, GetParam());
  Rng rng = MakeRng(3, "t");
  for (int i = 0; i < 2000; ++i) f.Add(i / 10, 200 + static_cast<int64_t>(rng() % 3000), i % 3);
  WorkerView w;
  BatchDecision d;
  size_t served = 0, dropped = 0;
  TimePoint now = kTimeZero + Millis(200);
  while (!f.q.slots.empty()) {
    f.policy->NextBatch(w, f.q.View(), now, &d);
    served += d.take.size();
    dropped += d.drop.size();
    std::vector<uint32_t> gone = d.take;
    gone.insert(gone.end(), d.drop.begin(), d.drop.end());
    gone.insert(gone.end(), d.reject.begin(), d.reject.end());
    std::sort(gone.rbegin(), gone.rend());
    ASSERT_FALSE(gone.empty());
    for (uint32_t p : gone) f.q.slots.erase(f.q.slots.begin() + p);
    ASSERT_EQ(static_cast<OrlojBatching*>(f.policy.get())->tracked(0), f.q.slots.size());
    now += Millis(60);
  }
  EXPECT_EQ(served + dropped, 2000u);
  EXPECT_GT(served, 100u);
}

INSTANTIATE_TEST_SUITE_P(Options, OrlojDrainTest,
                         ::testing::Values(std::map<std::string, std::string>{},
                                           std::map<std::string, std::string>{
                                               {"cost_steps", "0:1,100:2"}},
                                           std::map<std::string, std::string>{{"b", "5"}}));

// --- baselines ---

TEST(ClockworkBatchingTest, DropsPredictedMissesAndFitsBatchToHeadDeadline) {
  ProfileSuite s = DynamicSuite();
  Fixture f;
  f.policy = MakeBatching("clockwork", s, {});
  f.Add(0, 20, 0);  // est(1) = 30 ms > 20 ms: dropped
  f.Add(0, 75, 0);  // est(4) = 60 ms fits, est(8) = 100 ms does not
  for (int i = 0; i < 6; ++i) f.Add(0, 1000, 0);
  WorkerView w;
  BatchDecision d;
  f.policy->NextBatch(w, f.q.View(), kTimeZero, &d);
  EXPECT_EQ(d.drop, (std::vector<uint32_t>{0}));
  // est(k) is lat at the next profiled size (1, 2, 4, 8): 7 candidates -> lat(8) = 100 ms
  // misses the 75 ms head deadline, down to 4 -> lat(4) = 60 ms.
  EXPECT_EQ(d.take.size(), 4u);
}

TEST(NexusBatchingTest, PlansBatchFromRateAndSlo) {
  ProfileSuite s = DynamicSuite();
  PolicyParams params("t", {{"rate_qps", "100"}});
  auto b = NexusBatching::Create(params, FixedSelection::Create(params).value()).value();
  PolicyContext ctx;
  ctx.suite = &s;
  ctx.workers = testing::MakeWorkers(1, 1);
  ASSERT_TRUE(b->Init(ctx).ok());
  auto* nexus = static_cast<NexusBatching*>(b.get());
  // est(b) = 20 + 10 b ms (rounded up to 1,2,4,8); duty cycle max(est, b * 10 ms).
  // b = 4: 60 + max(60, 40) = 120 <= 150; b = 5 rounds up to 8: 100 + 100 > 150.
  EXPECT_EQ(nexus->PlannedBatch(0, 0, 8, Millis(150)), 4);
  EXPECT_EQ(nexus->PlannedBatch(0, 0, 8, Millis(50)), 1);
}

TEST(ClipperBatchingTest, AimdOnMeasuredBatchLatency) {
  ProfileSuite s = DynamicSuite();
  Fixture f;
  f.policy = MakeBatching("clipper", s, {});
  for (int i = 0; i < 20; ++i) f.Add(0, 100, 0);
  auto* clipper = static_cast<ClipperBatching*>(f.policy.get());
  WorkerView w;
  BatchDecision d;
  f.policy->NextBatch(w, f.q.View(), kTimeZero, &d);
  EXPECT_EQ(d.take.size(), 1u);
  w.busy_until = kTimeZero + Millis(30);  // measured 30 ms <= 100 ms: +1
  f.policy->NextBatch(w, f.q.View(), kTimeZero + Millis(30), &d);
  EXPECT_EQ(clipper->cap(0), 2);
  EXPECT_EQ(d.take.size(), 2u);
  w.busy_until = kTimeZero + Millis(200);  // measured 170 ms > 100 ms: x0.9, floor
  f.policy->NextBatch(w, f.q.View(), kTimeZero + Millis(200), &d);
  EXPECT_EQ(clipper->cap(0), 1);
}

TEST(BatchingStateTest, WorkersAddedAfterInitGetFreshState) {
  ProfileSuite s = DynamicSuite();
  const WorkerView added =
      testing::AddedWorker(testing::MakeWorkers(1, s.variants().size())[0], 2 + 3);  // id n+3
  for (const std::string name : {"orloj", "clipper", "nexus", "clockwork"}) {
    Fixture f;
    f.policy = MakeBatching(name, s, {}, /*workers=*/2);
    for (int i = 0; i < 5; ++i) f.Add(0, 1000, i % 2);
    BatchDecision d;
    f.policy->NextBatch(added, f.q.View(), kTimeZero, &d);
    ASSERT_EQ(d.kind, BatchDecision::Kind::kRun) << name;
    EXPECT_FALSE(d.take.empty()) << name;
    if (name == "orloj") {
      auto* orloj = static_cast<OrlojBatching*>(f.policy.get());
      EXPECT_EQ(orloj->tracked(5) + d.take.size(), 5u);  // the rest is tracked for worker 5
      EXPECT_EQ(orloj->tracked(0), 0u);
    }
    if (name == "clipper") {  // a fresh AIMD state: the initial cap, then additive increase
      auto* clipper = static_cast<ClipperBatching*>(f.policy.get());
      EXPECT_EQ(clipper->cap(5), 1);
      WorkerView w = added;
      w.busy_until = kTimeZero + Millis(30);
      f.policy->NextBatch(w, f.q.View(), kTimeZero + Millis(30), &d);
      EXPECT_EQ(clipper->cap(5), 2);
      EXPECT_EQ(clipper->cap(0), 1);
    }
  }
}

}  // namespace
}  // namespace sloserve

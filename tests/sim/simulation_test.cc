#include "sloserve/sim/simulation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "sloserve/core/embedded_files.h"
#include "sloserve/sim/sweep.h"

namespace sloserve {
namespace {

RunSpec TextSpec(double qps, const std::string& variant) {
  RunSpec spec;
  spec.suite = "ramsis-text";
  spec.workers = 20;
  spec.arrival.kind = "poisson";
  spec.arrival.rate_qps = qps;
  spec.arrival.horizon = Seconds(10);
  spec.policy.options["variant"] = variant;
  return spec;
}

const ProfileSuite& TextSuite() {
  static const ProfileSuite* s = new ProfileSuite(LoadSuite("ramsis-text").value());
  return *s;
}

TEST(SimulationTest, DeterministicForASeedAndDifferentAcrossSeeds) {
  RunSpec spec = TextSpec(300, "bert_mini");
  spec.service.mode = ServiceTimeOptions::Mode::kSample;
  std::vector<QueryRecord> a, b;
  SimHooks ha, hb;
  ha.on_record = [&](const QueryRecord& r) { a.push_back(r); };
  hb.on_record = [&](const QueryRecord& r) { b.push_back(r); };
  auto ra = RunSimulation(spec, TextSuite(), ha);
  auto rb = RunSimulation(spec, TextSuite(), hb);
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  ASSERT_TRUE(rb.ok());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].id, b[i].id);
    ASSERT_EQ(a[i].finish, b[i].finish);
    ASSERT_EQ(a[i].worker, b[i].worker);
  }
  spec.seed = 2;
  auto rc = RunSimulation(spec, TextSuite());
  ASSERT_TRUE(rc.ok());
  EXPECT_NE(rc->summary.arrived, ra->summary.arrived);
}

TEST(SimulationTest, EveryArrivalIsAccountedForExactlyOnce) {
  RunSpec spec = TextSpec(3000, "bert_base");  // far beyond capacity: long queues
  spec.max_worker_queue = 50;
  std::map<QueryId, int> seen;
  SimHooks hooks;
  hooks.on_record = [&](const QueryRecord& r) { ++seen[r.id]; };
  auto r = RunSimulation(spec, TextSuite(), hooks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const MetricsSummary& m = r->summary;
  EXPECT_EQ(static_cast<int64_t>(seen.size()), m.arrived);
  for (const auto& [id, n] : seen) ASSERT_EQ(n, 1) << id;
  EXPECT_EQ(m.completed + m.dropped, m.arrived);
  EXPECT_EQ(m.met + m.late, m.completed);
  EXPECT_GT(m.dropped, 0);
  EXPECT_GT(m.violation_rate, 0.5);
}

TEST(SimulationTest, SeriesP99IsEachIntervalsP99OfItsCompletedArrivals) {
  // Overloaded, with drops, so late intervals have long queues and a different p99 each.
  RunSpec spec = TextSpec(2500, "bert_base");
  spec.max_worker_queue = 50;
  auto off = RunSimulation(spec, TextSuite());
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(off->series_p99_ms.empty()) << "only on request (sim --series)";
  spec.series_latency = true;
  std::map<size_t, std::vector<double>> by_interval;  // latency ms by arrival interval
  SimHooks hooks;
  hooks.on_record = [&](const QueryRecord& r) {
    if (r.dropped) return;
    by_interval[static_cast<size_t>(r.arrival.time_since_epoch() / spec.series_interval)].push_back(
        static_cast<double>(r.latency().count()) * 1e-3);
  };
  auto r = RunSimulation(spec, TextSuite(), hooks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->series_p99_ms.size(), r->series.size());
  EXPECT_EQ(r->summary.p99_ms, off->summary.p99_ms) << "the run itself is unchanged";
  std::set<double> distinct;
  for (size_t i = 0; i < r->series.size(); ++i) {
    std::vector<double>& v = by_interval[i];
    ASSERT_EQ(static_cast<int64_t>(v.size()), r->series[i].completed) << i;
    double want = 0;
    if (!v.empty()) {  // numpy's default: linear between order statistics
      std::sort(v.begin(), v.end());
      const double pos = 0.99 * static_cast<double>(v.size() - 1);
      const size_t lo = static_cast<size_t>(pos);
      const double hi = lo + 1 < v.size() ? v[lo + 1] : v[lo];
      want = v[lo] + (hi - v[lo]) * (pos - static_cast<double>(lo));
    }
    EXPECT_NEAR(r->series_p99_ms[i], want, 1e-9) << "interval " << i;
    distinct.insert(r->series_p99_ms[i]);
  }
  EXPECT_GT(distinct.size(), 3u);
}

TEST(SimulationTest, MoreAccurateVariantCostsLatencyAtModerateLoad) {
  auto fast = RunSimulation(TextSpec(200, "bert_tiny"), TextSuite());
  auto slow = RunSimulation(TextSpec(200, "bert_medium"), TextSuite());
  ASSERT_TRUE(fast.ok() && slow.ok());
  EXPECT_GT(slow->summary.accuracy, fast->summary.accuracy);
  EXPECT_GT(slow->summary.p50_ms, fast->summary.p50_ms);
  EXPECT_LT(fast->summary.violation_rate, 0.01);
  EXPECT_NEAR(fast->summary.throughput_qps, 200, 200 * 0.1);
}

TEST(SimulationTest, ImpossibleSloIsAClearError) {
  RunSpec spec = TextSpec(100, "bert_tiny");
  spec.slo = Micros(100);
  auto r = RunSimulation(spec, TextSuite());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("impossible SLO"), std::string::npos) << r.status().message();
}

TEST(SimulationTest, SweepResultsDoNotDependOnJobs) {
  std::vector<RunSpec> runs = {TextSpec(100, "bert_tiny"), TextSpec(400, "bert_small"),
                               TextSpec(800, "bert_mini")};
  auto one = RunSweep(runs, 1, nullptr);
  auto two = RunSweep(runs, 2, nullptr);
  ASSERT_TRUE(one.ok() && two.ok());
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ((*one)[i].summary.arrived, (*two)[i].summary.arrived);
    EXPECT_EQ((*one)[i].summary.p99_ms, (*two)[i].summary.p99_ms);
  }
}

TEST(SimulationTest, TwitterTraceReplayMatchesTheTraceVolume) {
  RunSpec spec;
  spec.suite = "ramsis-image";
  spec.workers = 60;
  spec.slo = Millis(150);
  spec.arrival.kind = "qps_interval_trace";
  spec.arrival.trace_path = std::string(kEmbeddedPrefix) + "traces/twitter_04_25_norm.txt";
  // The whole trace at a tenth of its rates: the same 270 s replay with 75k instead of
  // 752k queries through the engine (the full-rate arrival stream itself is checked by
  // workload_test's TraceArrivalsTest.TwitterTraceReplay).
  spec.arrival.rate_scale = 0.1;
  spec.policy.options["variant"] = "shufflenet_v2_x0_5";
  static const ProfileSuite* image = new ProfileSuite(LoadSuite("ramsis-image").value());
  auto r = RunSimulation(spec, *image);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // 27 intervals x 10 s, sum of QPS = 75,242, x 0.1 -> 75,242 expected queries.
  EXPECT_NEAR(static_cast<double>(r->summary.arrived), 75242, 5 * std::sqrt(75242.0));
  EXPECT_NEAR(r->load_qps, 278.67, 0.1);
  EXPECT_EQ(r->series.size(), 270u);
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

TEST(SimulationTest, ModelAwarePlacementAvoidsColdStartsThatRandomPays) {
  static const ProfileSuite* suite = new ProfileSuite(LoadSuite("infadapter-resnet").value());
  RunSpec spec;
  spec.suite = "infadapter-resnet";
  spec.hardware = "cpu-8c";
  spec.workers = 4;
  spec.slo = Seconds(20);
  spec.preload = "none";  // ResNet-50 loads (6.82 s) on first use
  spec.arrival.kind = "poisson";
  spec.arrival.rate_qps = 0.5;  // well within one warm worker's capacity
  spec.arrival.horizon = Seconds(120);
  spec.policy.options["variant"] = "resnet50";
  spec.policy.placement = "random";
  auto random = RunSimulation(spec, *suite);
  spec.policy.placement = "model_aware";
  auto aware = RunSimulation(spec, *suite);
  ASSERT_TRUE(random.ok()) << random.status().ToString();
  ASSERT_TRUE(aware.ok()) << aware.status().ToString();
  EXPECT_EQ(random->summary.cold_starts, 4);  // every worker pays the load once
  EXPECT_EQ(aware->summary.cold_starts, 1);   // everything stays on the warm worker
  EXPECT_EQ(aware->summary.completed, aware->summary.arrived);
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

TEST(SimulationTest, MultipleSlosArePartitionedAcrossTheirWorkers) {
  RunSpec spec = TextSpec(400, "bert_tiny");
  spec.workers = 4;
  spec.slo_mix = {{Millis(100), 1.0}, {Millis(300), 3.0}};
  spec.policy.dispatch = "slo_partition";
  spec.policy.options["slo_workers"] = "100:1,300:3";
  int tight = 0, loose = 0;
  SimHooks hooks;
  hooks.on_record = [&](const QueryRecord& r) {
    const Duration slo = r.deadline - r.arrival;
    if (slo == Millis(100)) {
      ++tight;
      EXPECT_EQ(r.worker, 0u);
    } else {
      ++loose;
      EXPECT_GE(r.worker, 1u);
    }
  };
  auto r = RunSimulation(spec, TextSuite(), hooks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(static_cast<double>(tight) / (tight + loose), 0.25, 0.02);
  spec.policy.options["slo_workers"] = "100:1,300:2";  // 3 != 4 workers
  auto bad = RunSimulation(spec, TextSuite());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("slo_workers"), std::string::npos);
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

TEST(SimulationTest, HeterogeneousHardwareMixCostsWhatItsTypesCost) {
  static const ProfileSuite* suite = new ProfileSuite(LoadSuite("kairos-recsys").value());
  RunSpec spec;
  spec.suite = "kairos-recsys";
  spec.task = "rm2";
  spec.hardware = "g4dn.xlarge:1,c5n.2xlarge:2";
  spec.arrival.kind = "poisson";
  spec.arrival.rate_qps = 20;
  spec.arrival.horizon = Seconds(20);
  spec.sizes = "deeprecsys";
  spec.policy.batching = "fifo";
  spec.policy.dispatch = "jsq";
  std::map<WorkerId, int> served;
  SimHooks hooks;
  hooks.on_record = [&](const QueryRecord& r) { ++served[r.worker]; };
  auto r = RunSimulation(spec, *suite, hooks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->summary.cost_per_hour, 0.526 + 2 * 0.432, 1e-9);
  EXPECT_EQ(served.size(), 3u);                                // all three instances got work
  EXPECT_EQ(r->spec.hardware, "g4dn.xlarge:1,c5n.2xlarge:2");  // the mix, as written
  EXPECT_EQ(r->spec.workers, 3);
  // The impossible-SLO check looks at the mix's fastest type, whatever the order: 2 ms
  // is met at batch 1 on g4dn.xlarge (p95 1.1 ms) but not on t3.xlarge (8.1 ms).
  spec.slo = Millis(2);
  spec.hardware = "t3.xlarge:2,g4dn.xlarge:1";
  EXPECT_TRUE(RunSimulation(spec, *suite).ok());
  spec.hardware = "t3.xlarge:2";
  auto impossible = RunSimulation(spec, *suite);
  ASSERT_FALSE(impossible.ok());
  EXPECT_NE(impossible.status().message().find("impossible SLO"), std::string::npos);
  spec.slo = Duration(0);
  spec.hardware = "g4dn.xlarge:1,nope:2";
  auto bad = RunSimulation(spec, *suite);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nope"), std::string::npos);
}

}  // namespace
}  // namespace sloserve

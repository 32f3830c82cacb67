// Multi-model runs (docs/multi-model.md): per-model rows against the run's total,
// determinism, Zipf popularity, and a one-model deployment against the single-model run.
#include <gtest/gtest.h>

#include <set>

#include "sloserve/config/experiment_config.h"
#include "sloserve/config/suite_resolver.h"
#include "sloserve/report/model_table.h"
#include "sloserve/sim/simulation.h"

namespace sloserve {
namespace {

StatusOr<RunResult> Simulate(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  ASSIGN_OR_RETURN(ExperimentConfig cfg, ParseExperimentConfig(yaml, "m.yaml"));
  RETURN_IF_ERROR(ApplyOverrides(&cfg, sets));
  ASSIGN_OR_RETURN(std::vector<RunSpec> runs, ExpandRuns(cfg));
  if (runs.size() != 1) return InvalidArgumentError("expected one run");
  ASSIGN_OR_RETURN(ProfileSuite suite, ResolveRunSuite(runs[0]));
  return RunSimulation(runs[0], suite);
}

// 12 t5 models of three sizes on 4 machines of 2 workers, nothing resident: cold starts
// and evictions happen, some queries miss their SLO.
const char kMixed[] = R"(
suite: t5-translation
workers: 8
workers_per_machine: 2
preload: none
duration_s: 60
workload: {arrival: poisson, load_qps: 3}
popularity: {zipf_s: 1}
policy: {placement: colocation, batching: fifo, max_batch: 1}
models:
  - {name: small, variants: t5-small, copies: 6, slo_ms: 4500}
  - {name: large, variants: t5-large, copies: 4, slo_ms: 20000}
  - {name: big, variants: t5-3b, copies: 2, workload: {arrival: poisson, load_qps: 0.2}}
)";

TEST(MultiModelSimTest, ModelRowsSumToTheTotal) {
  auto r = Simulate(kMixed);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->models.size(), 12u);
  MetricsSummary sum;
  double load = 0;
  for (const ModelResult& m : r->models) {
    sum.arrived += m.summary.arrived;
    sum.completed += m.summary.completed;
    sum.met += m.summary.met;
    sum.late += m.summary.late;
    sum.dropped += m.summary.dropped;
    sum.cold_starts += m.summary.cold_starts;
    load += m.load_qps;
    EXPECT_DOUBLE_EQ(m.summary.elapsed_s, r->summary.elapsed_s);
  }
  const MetricsSummary& t = r->summary;
  EXPECT_GT(t.arrived, 100);
  EXPECT_EQ(sum.arrived, t.arrived);
  EXPECT_EQ(sum.completed, t.completed);
  EXPECT_EQ(sum.met, t.met);
  EXPECT_EQ(sum.late, t.late);
  EXPECT_EQ(sum.dropped, t.dropped);
  EXPECT_GT(t.cold_starts, 0);
  EXPECT_EQ(sum.cold_starts, t.cold_starts);
  EXPECT_NEAR(load, r->load_qps, 1e-9);
  EXPECT_NEAR(load, 3 + 2 * 0.2, 1e-9);
  // Every model's SLO is its own: a model's met queries finished within it.
  EXPECT_EQ(r->models[0].slo, Millis(4500));
  EXPECT_EQ(r->models[6].slo, Millis(20000));
  EXPECT_EQ(r->models[10].slo, Seconds(60));  // the translation task's default
  // The worst latency the run saw is some model's.
  double max_ms = 0;
  for (const ModelResult& m : r->models) max_ms = std::max(max_ms, m.summary.max_ms);
  EXPECT_DOUBLE_EQ(max_ms, t.max_ms);
}

TEST(MultiModelSimTest, DeterministicForASeed) {
  auto a = Simulate(kMixed);
  auto b = Simulate(kMixed);
  auto c = Simulate(kMixed, {"seed=2"});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  bool differs = false;
  for (size_t i = 0; i < a->models.size(); ++i) {
    EXPECT_EQ(a->models[i].summary.arrived, b->models[i].summary.arrived);
    EXPECT_EQ(a->models[i].summary.met, b->models[i].summary.met);
    EXPECT_EQ(a->models[i].summary.cold_starts, b->models[i].summary.cold_starts);
    EXPECT_DOUBLE_EQ(a->models[i].summary.p99_ms, b->models[i].summary.p99_ms);
    differs = differs || a->models[i].summary.arrived != c->models[i].summary.arrived;
  }
  EXPECT_TRUE(differs) << "seed 2 gave every model the same arrivals as seed 1";
}

TEST(MultiModelSimTest, ZipfPopularityShowsInTheArrivals) {
  auto r = Simulate(R"(
suite: ramsis-text
workers: 20
duration_s: 30
workload: {arrival: poisson, load_qps: 400}
popularity: {zipf_s: 1}
models:
  - {name: bert, task: text, variants: bert_tiny, copies: 8}
)");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->models.size(), 8u);
  const double total = static_cast<double>(r->summary.arrived);
  double h8 = 0;
  for (int k = 1; k <= 8; ++k) h8 += 1.0 / k;
  for (size_t i = 0; i < 8; ++i) {
    const double expected = 1.0 / static_cast<double>(i + 1) / h8;
    EXPECT_NEAR(r->models[i].summary.arrived / total, expected, 0.2 * expected) << i;
    EXPECT_NEAR(r->models[i].share, expected, 1e-9);
  }
}

TEST(MultiModelSimTest, OneModelTakingTheWholeWorkloadIsTheSingleModelRun) {
  const std::string head = R"(
suite: ramsis-text
workers: 12
duration_s: 20
seed: 5
executor: {latency: sample}
workload: {arrival: gamma, load_qps: 300, cv: 2}
policy: {variant: bert_mini}
)";
  auto single = Simulate(head + "task: text\nslo_ms: 150\n");
  auto one = Simulate(head + "models: [{name: text, task: text, slo_ms: 150}]\n",
                      {"policy.variant=text/bert_mini"});
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  const MetricsSummary& s = single->summary;
  const MetricsSummary& o = one->summary;
  EXPECT_GT(s.arrived, 4000);
  EXPECT_EQ(o.arrived, s.arrived);
  EXPECT_EQ(o.met, s.met);
  EXPECT_EQ(o.late, s.late);
  EXPECT_EQ(o.dropped, s.dropped);
  EXPECT_DOUBLE_EQ(o.p99_ms, s.p99_ms);
  EXPECT_DOUBLE_EQ(o.accuracy, s.accuracy);
  EXPECT_EQ(o.batches, s.batches);
  ASSERT_EQ(one->models.size(), 1u);
  EXPECT_EQ(one->models[0].summary.met, s.met);
  EXPECT_DOUBLE_EQ(one->models[0].summary.p99_ms, s.p99_ms);
  EXPECT_TRUE(single->models.empty());
}

TEST(MultiModelSimTest, JsonRowsCarryTheModel) {
  auto r = Simulate(kMixed);
  ASSERT_TRUE(r.ok());
  const std::vector<nlohmann::json> rows = RunRowsJson(*r, 0);
  ASSERT_EQ(rows.size(), 13u);
  EXPECT_EQ(rows[0]["model"], "all");
  EXPECT_EQ(rows[1]["model"], "small#1");
  EXPECT_EQ(rows[12]["model"], "big#2");
  int64_t arrived = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    arrived += rows[i]["arrived"].get<int64_t>();
    EXPECT_EQ(rows[i]["policy"], rows[0]["policy"]);
    EXPECT_EQ(rows[i]["run"], 0);
  }
  EXPECT_EQ(arrived, rows[0]["arrived"].get<int64_t>());
  EXPECT_DOUBLE_EQ(rows[1]["slo_ms"].get<double>(), 4500);
  // A single-model run's row is unchanged: no model field.
  auto single = Simulate("suite: ramsis-text\nduration_s: 2\nworkload: {load_qps: 10}\n");
  ASSERT_TRUE(single.ok());
  const auto plain = RunRowsJson(*single, 0);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_FALSE(plain[0].contains("model"));
  EXPECT_NE(ModelTables({*r}).find("small#1"), std::string::npos);
  EXPECT_EQ(ModelTables({*single}), "");
}

// Issue 32's pool: five models from five suites (two embedded image and text suites, the
// recommendation suite, an ORLOJ suite by a path next to the config, T5) on five hardware
// types with stated prices, two workers to a machine. The shared queue hands each worker
// only models its hardware serves.
const char kFiveSuites[] = R"(
suite: ramsis-image
hardware: "n1-4cpu:6,g4dn.xlarge:2,r5n.large:4,v100:2,c220g5:2"
workers_per_machine: 2
duration_s: 10
workload: {arrival: poisson, load_qps: 20}
hardware_prices: {v100: 3.06, c220g5: 1.53}
policy: {dispatch: shared, batching: edf}
models:
  - {name: image, variants: resnet18, slo_ms: 300}
  - {name: text, suite: ramsis-text, slo_ms: 500}
  - {name: rec, suite: kairos-recsys, task: rm2, slo_ms: 400}
  - {name: dyn, suite: profiles/modes1.prof, slo_ms: 2000}
  - {name: t5, suite: t5-translation, variants: t5-small, share: 0.02}
)";

TEST(MultiModelSimTest, ModelsFromFiveSuitesRunOnlyOnTheirSuitesHardware) {
  // Read as a config in experiments/orloj/, next to the ORLOJ suites.
  auto cfg = ParseExperimentConfig(
      kFiveSuites, std::string(SLOSERVE_SOURCE_DIR) + "/experiments/orloj/composed.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  auto runs = ExpandRuns(*cfg);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  auto suite = ResolveRunSuite((*runs)[0]);
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
  // The types each model's queries ran on, and the machines (one type each).
  std::vector<std::set<std::string>> ran_on(5);
  const Engine* engine = nullptr;
  std::vector<std::pair<std::string, double>> machines;
  SimHooks hooks;
  hooks.on_engine = [&](const Engine& e) {
    engine = &e;
    for (const MachineView& m : e.machines())
      machines.emplace_back(suite->hardware()[m.hardware].name, m.memory_mb);
  };
  hooks.on_record = [&](const QueryRecord& q) {
    if (!q.dropped)
      ran_on[q.task].insert(suite->hardware()[engine->workers()[q.worker].hardware].name);
  };
  auto r = RunSimulation((*runs)[0], *suite, hooks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->models.size(), 5u);
  for (const ModelResult& m : r->models) {
    EXPECT_GT(m.summary.arrived, 0) << m.name;
    EXPECT_EQ(m.summary.completed, m.summary.arrived) << m.name;
  }
  EXPECT_EQ(ran_on[0], (std::set<std::string>{"n1-4cpu"}));
  EXPECT_EQ(ran_on[1], (std::set<std::string>{"n1-4cpu"}));
  EXPECT_FALSE(ran_on[2].empty());
  for (const std::string& type : ran_on[2])
    EXPECT_TRUE(type == "g4dn.xlarge" || type == "r5n.large") << type;
  EXPECT_EQ(ran_on[3], (std::set<std::string>{"v100"}));
  EXPECT_EQ(ran_on[4], (std::set<std::string>{"c220g5"}));
  // The stated prices where the suites had none (c220g5) or another (v100).
  EXPECT_NEAR(r->summary.cost_per_hour, 6 * 0.19 + 2 * 0.526 + 4 * 0.149 + 2 * 3.06 + 2 * 1.53,
              1e-9);
  const std::vector<std::pair<std::string, double>> expected = {
      {"n1-4cpu", 15 * 1024.0},     {"n1-4cpu", 15 * 1024.0},   {"n1-4cpu", 15 * 1024.0},
      {"g4dn.xlarge", 16 * 1024.0}, {"r5n.large", 16 * 1024.0}, {"r5n.large", 16 * 1024.0},
      {"v100", 16 * 1024.0},        {"c220g5", 192 * 1024.0}};
  EXPECT_EQ(machines, expected);
  // The rows name each model's suite; the total all of them.
  const std::vector<nlohmann::json> rows = RunRowsJson(*r, 0);
  ASSERT_EQ(rows.size(), 6u);
  const std::string orloj =
      std::string(SLOSERVE_SOURCE_DIR) + "/experiments/orloj/profiles/modes1.prof";
  EXPECT_EQ(rows[0]["suite"],
            "ramsis-image+ramsis-text+kairos-recsys+" + orloj + "+t5-translation");
  EXPECT_EQ(rows[1]["suite"], "ramsis-image");
  EXPECT_EQ(rows[3]["suite"], "kairos-recsys");
  EXPECT_EQ(rows[4]["suite"], orloj);
}

}  // namespace
}  // namespace sloserve

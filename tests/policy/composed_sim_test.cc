// The composed planner end to end in the simulator, on a two-model pool (two models made
// from ramsis-image, with their own SLOs) planned by the oracle forecaster: the first
// plan replaces the configured pool, every plan stays within the $/h budget, each model
// gets workers of its own variants, and the solves follow each model's load; and with
// `share: all`, shared machines that a placement loads per query.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "sloserve/config/experiment_config.h"
#include "sloserve/config/suite_resolver.h"
#include "sloserve/engine/engine.h"
#include "sloserve/policy/planning/composed_planning.h"
#include "sloserve/sim/simulation.h"

namespace sloserve {
namespace {

const char kTwoModels[] = R"(
suite: ramsis-image
hardware: n1-4cpu
workers: 2
seed: 1
duration_s: 120
workload: {load_qps: 40}
models:
  - {name: img-a, task: image, slo_ms: 300}
  - {name: img-b, task: image, slo_ms: 600}
policy: {dispatch: quota, planning: composed, budget_usd_per_h: 2, interval_s: 10,
         forecaster: oracle, margin: 0, stabilization_s: 0}
)";

// A config of one run, and its composed suite.
struct OneRun {
  RunSpec run;
  ProfileSuite suite;
  void Parse(const std::string& text) {
    auto cfg = ParseExperimentConfig(text, "composed.yaml");
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    auto runs = ExpandRuns(*cfg);
    ASSERT_TRUE(runs.ok() && runs->size() == 1u) << runs.status().ToString();
    run = runs->front();
    auto resolved = ResolveRunSuite(run);
    ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
    suite = std::move(*resolved);
  }
};

TEST(ComposedSimTest, PlansEachModelWithinTheBudget) {
  OneRun one;
  ASSERT_NO_FATAL_FAILURE(one.Parse(kTwoModels));
  const ProfileSuite* suite = &one.suite;
  const Engine* engine = nullptr;
  std::vector<ComposedPlanning::Solve> solves;
  std::vector<WorkerView> final_workers;
  SimHooks hooks;
  hooks.on_engine = [&](const Engine& e) { engine = &e; };
  hooks.on_record = [&](const QueryRecord&) {
    // The planner outlives the records; copy what it decided at the last one.
    solves = dynamic_cast<const ComposedPlanning&>(*engine->planning()).solves();
    final_workers = engine->workers();
  };
  auto r = RunSimulation(one.run, *suite, hooks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_GE(solves.size(), 5u);  // every 10 s of a 120 s run, less the rollouts
  for (const ComposedPlanning::Solve& s : solves) {
    EXPECT_LE(s.plan.cost_usd_per_h, 2 + 1e-9);
    ASSERT_EQ(s.forecast_rps.size(), 2u);
    EXPECT_GT(s.forecast_rps[0], 5);  // about 20 rps each, the oracle's peaks above
    EXPECT_GT(s.forecast_rps[1], 5);
  }
  // The configured workers 0 and 1 are gone; each model has pinned workers of its own.
  ASSERT_GE(final_workers.size(), 4u);
  EXPECT_EQ(final_workers[0].phase, WorkerPhase::kRetired);
  EXPECT_EQ(final_workers[1].phase, WorkerPhase::kRetired);
  std::set<TaskId> served;
  for (const WorkerView& w : final_workers) {
    if (w.phase != WorkerPhase::kActive) continue;
    ASSERT_NE(w.pinned, kNoId);
    served.insert(suite->variants()[w.pinned].task);
  }
  EXPECT_EQ(served, (std::set<TaskId>{0, 1}));
}

// `share: all` end to end: static sizing buys each model 1 $/h of n1-4cpu ($0.19/h): 5
// machines each, 10 in all, none dedicated or pinned; the configured two (undedicated
// n1-4cpu machines too) are replaced all the same; the placement loads on the machines
// only each model's static variant, and both models' queries are served.
TEST(ComposedSimTest, SharedMachinesServeBothModelsThroughThePlacement) {
  const std::string config =
      std::string(kTwoModels).substr(0, std::string(kTwoModels).find("policy:")) +
      R"(policy: {dispatch: jsq, batching: edf, planning: composed,
         budget_usd_per_h: 2, sizing: static, share: all, placement: colocation,
         fixed_variants: "img-a=efficientnet_b0,img-b=efficientnet_b3",
         warm_variant: "img-a/efficientnet_b0,img-b/efficientnet_b3",
         variant: "img-a/efficientnet_b0,img-b/efficientnet_b3"}
)";
  OneRun one;
  ASSERT_NO_FATAL_FAILURE(one.Parse(config));
  const ProfileSuite* suite = &one.suite;
  const Engine* engine = nullptr;
  std::vector<WorkerView> final_workers;
  SimHooks hooks;
  hooks.on_engine = [&](const Engine& e) { engine = &e; };
  std::map<TaskId, int> met;  // per model
  std::map<TaskId, std::set<VariantId>> ran;
  hooks.on_record = [&](const QueryRecord& q) {
    final_workers = engine->workers();
    met[q.task] += q.met_slo ? 1 : 0;
    if (q.variant != kNoId) ran[q.task].insert(q.variant);
  };
  auto r = RunSimulation(one.run, *suite, hooks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_GE(final_workers.size(), 12u);
  EXPECT_EQ(final_workers[0].phase, WorkerPhase::kRetired);
  EXPECT_EQ(final_workers[1].phase, WorkerPhase::kRetired);
  const std::set<VariantId> warm = {*suite->FindVariant("img-a/efficientnet_b0"),
                                    *suite->FindVariant("img-b/efficientnet_b3")};
  int active = 0;
  std::set<VariantId> held;
  for (const WorkerView& w : final_workers) {
    if (w.phase != WorkerPhase::kActive) continue;
    ++active;
    EXPECT_EQ(w.model, kNoId);
    EXPECT_EQ(w.pinned, kNoId);
    for (VariantId v = 0; v < w.residency.size(); ++v) {
      if (w.residency[v] != Residency::kAbsent) held.insert(v);
    }
  }
  EXPECT_EQ(active, 10);
  EXPECT_EQ(held, warm);
  EXPECT_GT(met[0], 0);
  EXPECT_GT(met[1], 0);
  EXPECT_EQ(ran[0], (std::set<VariantId>{*suite->FindVariant("img-a/efficientnet_b0")}));
  EXPECT_EQ(ran[1], (std::set<VariantId>{*suite->FindVariant("img-b/efficientnet_b3")}));
}

}  // namespace
}  // namespace sloserve

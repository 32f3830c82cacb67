// The composed planner end to end in the simulator, on a two-model pool (two models made
// from ramsis-image, with their own SLOs) planned by the oracle forecaster: the first
// plan replaces the configured pool, every plan stays within the $/h budget, each model
// gets workers of its own variants, and the solves follow each model's load.
#include <gtest/gtest.h>

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

TEST(ComposedSimTest, PlansEachModelWithinTheBudget) {
  auto cfg = ParseExperimentConfig(kTwoModels, "composed.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  auto runs = ExpandRuns(*cfg);
  ASSERT_TRUE(runs.ok() && runs->size() == 1u) << runs.status().ToString();
  auto suite = ResolveRunSuite(runs->front());
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
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
  auto r = RunSimulation(runs->front(), *suite, hooks);
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

}  // namespace
}  // namespace sloserve

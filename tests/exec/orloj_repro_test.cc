// The ORLOJ paper's directions (appendix A Table 2, Figure 11) on seeds the tuning did
// not use (configs were set up on seed 1; this test runs seeds 21 and 22, 60 s each).
#include <gtest/gtest.h>

#include <map>

#include "sloserve/config/experiment_config.h"
#include "sloserve/sim/simulation.h"
#include "sloserve/sim/sweep.h"

namespace sloserve {
namespace {

// finish rate by (policy, slo index), averaged over the seeds.
using Rates = std::map<std::pair<std::string, int>, double>;

double At(const Rates& f, const std::string& policy, int slo) {
  auto it = f.find({policy, slo});
  return it == f.end() ? -1 : it->second;
}

Rates RunConfig(const std::string& config) {
  auto cfg =
      LoadExperimentConfig(std::string(SLOSERVE_SOURCE_DIR) + "/experiments/orloj/" + config);
  EXPECT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_TRUE(ApplyOverrides(&*cfg, {"seed=[21,22]", "duration_s=60"}).ok());
  auto runs = ExpandRuns(*cfg);
  EXPECT_TRUE(runs.ok()) << runs.status().ToString();
  auto results = RunSweep(*runs, 2, nullptr);
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  std::map<std::pair<std::string, int>, double> sum;
  std::map<int64_t, int> slo_index;
  for (const RunResult& r : *results) slo_index.emplace(r.spec.slo.count(), 0);
  int i = 0;
  for (auto& [slo, idx] : slo_index) idx = i++;
  for (const RunResult& r : *results)
    sum[{r.spec.policy.name, slo_index[r.spec.slo.count()]}] += r.summary.finish_rate / 2;
  return sum;
}

class OrlojReproTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OrlojReproTest, HighVarianceOrlojBeatsClockworkAndFarAboveNexusClipper) {
  auto f = RunConfig(GetParam());
  for (int slo = 1; slo < 5; ++slo) {  // SLO >= 2 x P99
    const double orloj = At(f, "orloj", slo);
    EXPECT_GT(orloj, At(f, "clockwork", slo) + 0.03) << "slo index " << slo;
    EXPECT_GT(orloj, At(f, "nexus", slo) + 0.02) << "slo index " << slo;
    EXPECT_GT(orloj, At(f, "clipper", slo) + 0.25) << "slo index " << slo;
  }
}

INSTANTIATE_TEST_SUITE_P(Table2, OrlojReproTest,
                         ::testing::Values("table2_std2.yaml", "table2_std1.yaml"));

TEST(OrlojReproStaticTest, StaticModelWithinAFewPercentOfClockwork) {
  auto f = RunConfig("static_fig11.yaml");
  for (int slo = 0; slo < 5; ++slo) {
    EXPECT_NEAR(At(f, "orloj", slo), At(f, "clockwork", slo), 0.06) << "slo index " << slo;
    EXPECT_GT(At(f, "orloj", slo), At(f, "clipper", slo)) << "slo index " << slo;
  }
}

TEST(OrlojSimAppsTest, AppWeightsChooseTheAppsOfArrivals) {
  const std::string base =
      "suite: " + std::string(SLOSERVE_SOURCE_DIR) +
      "/experiments/orloj/profiles/bimodal-std1.prof\n"
      "duration_s: 5\nslo_ms: 500\nworkload: {arrival: poisson, load_qps: 10}\n"
      "policy: {batching: orloj}\n";
  for (std::string w : {"1,0", "0,1", "0,0,1"}) {
    auto cfg = ParseExperimentConfig(base + "workload.app_weights: \"" + w + "\"\n", "t");
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    auto runs = ExpandRuns(*cfg);
    ASSERT_TRUE(runs.ok()) << runs.status().ToString();
    auto suite = LoadSuite((*runs)[0].suite);
    ASSERT_TRUE(suite.ok());
    std::map<AppId, int> apps;
    SimHooks hooks;
    hooks.on_record = [&](const QueryRecord& r) { ++apps[r.app]; };
    auto result = RunSimulation((*runs)[0], *suite, hooks);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const AppId want = w == "1,0" ? 0 : w == "0,1" ? 1 : 2;  // app 2: no histogram (pooled)
    ASSERT_EQ(apps.size(), 1u) << w;
    EXPECT_EQ(apps.begin()->first, want) << w;
  }
  auto bad = ParseExperimentConfig(base + "workload.app_weights: \"1,x\"\n", "t");
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(ExpandRuns(*bad).ok());
}

}  // namespace
}  // namespace sloserve

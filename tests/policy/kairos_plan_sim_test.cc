// Kairos configuration planning against simulation on the kairos-recsys suite (RM2,
// budget 1.5 $/h: 45 configurations with a g4dn.xlarge, small enough to simulate all):
// the upper bound bounds the simulated allowable throughput, Kairos' pick lands near
// the exhaustive optimum without evaluating anything, and Kairos+ reaches the optimum
// with fewer evaluations than random search.
#include <gtest/gtest.h>

#include "support/test_suite.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "policy/kairos_fixtures.h"
#include "sloserve/planner/config_search.h"
#include "sloserve/policy/latency_learning/latency_predictor.h"
#include "sloserve/policy/planning/kairos_config_pick.h"
#include "sloserve/policy/planning/kairos_upper_bound.h"
#include "sloserve/profile/profile.h"
#include "sloserve/sim/config_evaluator.h"
#include "sloserve/sim/heterogeneous_bounds.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

const ProfileSuite& Suite() {
  static const ProfileSuite* suite = &testing::EmbeddedSuite("kairos-recsys");
  return *suite;
}

RunSpec Rm2() {
  RunSpec spec = testing::Rm2Run("kairos", "");
  spec.arrival.rate_qps = 10;
  spec.arrival.horizon = Seconds(20);
  return spec;
}

struct Plan {
  ConfigSpace space;
  std::vector<InstanceCounts> configs;
  std::vector<double> bounds;
  size_t pick = 0;
  std::vector<RankedConfig> ranked;
};

Plan MakePlan(const RunSpec& run, double budget) {
  Plan p;
  const ProfileSuite& s = Suite();
  auto info = ResolveHeteroRun(run, s).value();
  p.space = MakeConfigSpace(s, budget, "").value();
  LatencyPredictor pred;
  EXPECT_TRUE(pred.Init(s, 1).ok());
  auto ub = KairosUpperBound::Create(pred, s, info.variant, info.qos,
                                     SampleQuerySizes(run, 10000, "plan").value())
                .value();
  p.space.min_count[ub.base()] = 1;
  p.configs = EnumerateConfigs(p.space);
  for (const auto& c : p.configs) p.bounds.push_back(ub.Bound(c));
  p.ranked = RankByBound(p.space, p.configs, p.bounds);
  p.pick = SimilarityPick(p.ranked, ub.base());
  return p;
}

ThroughputSearchOptions Search() {
  ThroughputSearchOptions o;
  o.start_qps = 20;
  o.rel_tol = 0.02;
  return o;
}

// `plan kairos --evaluate top` lists the pick among the top ones again: with parallel jobs
// two threads simulated it at once, so the count of simulations followed --jobs.
TEST(KairosPlanSimTest, AConfigurationListedTwiceIsSimulatedOnce) {
  const RunSpec run = Rm2();
  const Plan p = MakePlan(run, 1.5);
  SimulatedConfigEvaluator eval(run, Suite(), p.space, Search());
  const InstanceCounts c = p.ranked[p.pick].counts;
  const Status s = eval.EvaluateAll({c, c, c}, 3);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(eval.simulated(), 1u);
}

TEST(KairosPlanSimTest, BoundPickAndKairosPlusAgainstTheExhaustiveOptimum) {
  const RunSpec run = Rm2();
  const Plan p = MakePlan(run, 1.5);
  ASSERT_EQ(p.configs.size(), 45u);
  SimulatedConfigEvaluator eval(run, Suite(), p.space, Search());
  const Status all = eval.EvaluateAll(p.configs, 2);
  ASSERT_TRUE(all.ok()) << all.ToString();
  EXPECT_EQ(eval.simulated(), p.configs.size());
  const auto table = eval.cache();
  double optimum = 0;
  for (size_t i = 0; i < p.configs.size(); ++i) {
    const double v = table.at(p.configs[i]);
    optimum = std::max(optimum, v);
    // An upper bound: no configuration simulates above it (2%: the search resolution).
    EXPECT_LE(v, p.bounds[i] * 1.02) << FormatCounts(p.configs[i]);
  }
  ASSERT_GT(optimum, 0);
  // Kairos' pick, with no evaluation, within 15% of the exhaustive optimum.
  EXPECT_GE(table.at(p.ranked[p.pick].counts), 0.85 * optimum);
  // Kairos+ reaches the optimum (to the search resolution) quickly; the evaluator is
  // cached, so the searches below simulate nothing new.
  ConfigEvaluator f = [&](const InstanceCounts& c) { return eval.Evaluate(c); };
  auto kplus = KairosPlusSearch(p.configs, p.bounds, f, SearchOptions{});
  ASSERT_TRUE(kplus.ok());
  const size_t k_reach = kplus->EvaluationsToReach(0.98 * optimum);
  ASSERT_GT(k_reach, 0u);
  EXPECT_LE(k_reach, 3u);
  EXPECT_LT(kplus->evaluations.size(), p.configs.size() / 2);
  std::vector<size_t> random_reach;
  for (uint64_t seed = 1; seed <= 9; ++seed) {
    SearchOptions o;
    o.seed = seed;
    auto r = RandomSearch(p.configs, f, o);
    ASSERT_TRUE(r.ok());
    random_reach.push_back(r->EvaluationsToReach(0.98 * optimum));
  }
  std::sort(random_reach.begin(), random_reach.end());
  EXPECT_LT(k_reach, random_reach[4]);
  EXPECT_EQ(eval.simulated(), p.configs.size());
}

TEST(KairosPlanSimTest, EvaluationCacheRoundTripsAndRefusesAnotherSetting) {
  const RunSpec run = Rm2();
  const Plan p = MakePlan(run, 1.2);
  const testing::ScopedTempDir temp("kairos-plan-cache");
  const std::string path = temp.File("kairos_plan_cache.csv");
  SimulatedConfigEvaluator a(run, Suite(), p.space, Search());
  ASSERT_TRUE(a.LoadCache(path).ok());  // missing file: nothing loaded, no error
  ASSERT_TRUE(a.Evaluate(p.configs[0]).ok());
  ASSERT_TRUE(a.Evaluate(p.configs[1]).ok());
  ASSERT_TRUE(a.SaveCache(path).ok());
  SimulatedConfigEvaluator b(run, Suite(), p.space, Search());
  ASSERT_TRUE(b.LoadCache(path).ok());
  EXPECT_EQ(b.Evaluate(p.configs[1]).value(), a.Evaluate(p.configs[1]).value());
  EXPECT_EQ(b.simulated(), 0u);
  RunSpec other = run;
  other.seed = 7;
  SimulatedConfigEvaluator c(other, Suite(), p.space, Search());
  auto refused = c.LoadCache(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("another setting"), std::string::npos);
  {
    std::ofstream corrupt(path, std::ios::app);
    corrupt << "1,2,x\n";
  }
  auto bad = b.LoadCache(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find(path), std::string::npos);
  EXPECT_FALSE(a.Evaluate(InstanceCounts{9, 9, 9, 9}).ok());  // outside the space
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sloserve

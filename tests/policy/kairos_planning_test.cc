// Kairos configuration planning: the configuration space, the upper bound of Eqs. 9-15
// (hand-worked on a two-type suite, and against the Kairos artifact's own profile
// numbers on the real suite), the similarity pick, and the online searches on synthetic
// evaluators whose optimum is known.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "policy/kairos_fixtures.h"
#include "sloserve/planner/config_search.h"
#include "sloserve/policy/latency_learning/latency_predictor.h"
#include "sloserve/policy/planning/instance_configs.h"
#include "sloserve/policy/planning/kairos_config_pick.h"
#include "sloserve/policy/planning/kairos_upper_bound.h"
#include "sloserve/profile/profile.h"
#include "sloserve/workload/query_size_sampler.h"

namespace sloserve {
namespace {

using testing::TwoTypeSuite;

KairosUpperBound Bound(const ProfileSuite& s, std::vector<int> sizes, Duration qos = Millis(100)) {
  LatencyPredictor p;
  EXPECT_TRUE(p.Init(s, 1).ok());
  auto ub = KairosUpperBound::Create(p, s, 0, qos, std::move(sizes));
  EXPECT_TRUE(ub.ok()) << ub.status().ToString();
  return std::move(ub).value();
}

TEST(KairosUpperBoundTest, HandWorkedTwoTypeExample) {
  const ProfileSuite s = TwoTypeSuite();
  // Sizes 10, 100, 100, 1000: f = 3/4 small (< 1000) for the cpu.
  const KairosUpperBound ub = Bound(s, {10, 100, 100, 1000});
  EXPECT_EQ(ub.base(), 0u);
  EXPECT_EQ(ub.types()[1].violation_size, 1000);
  EXPECT_DOUBLE_EQ(ub.types()[1].small_fraction, 0.75);
  // Q_b = 1 / mean(2, 10, 10, 50 ms) = 1 / 18 ms; Q_b^{s+} = 1 / 50 ms = 20 qps;
  // Q_a = 1 / mean(1, 20, 20 ms) = 3 / 41 ms.
  const double q_b = 1000.0 / 18, q_large = 20, q_a = 3000.0 / 41;
  // Only the base: u Q_b.
  EXPECT_NEAR(ub.Bound({2, 0}), 2 * q_b, 1e-9);
  // One of each: C = Q_a (1 - f) / f = Q_a / 3 = 24.4 > u Q_b^{s+} = 20: the base is the
  // bottleneck (Eq. 12): 20 / 0.25 = 80.
  EXPECT_NEAR(ub.Bound({1, 1}), q_large / 0.25, 1e-9);
  // Two gpus, one cpu: 40 >= 24.4, the cpu is the bottleneck (Eq. 13).
  const double c = q_a / 3;
  EXPECT_NEAR(ub.Bound({2, 1}), q_a / 0.75 + (2 * q_large - c) / (2 * q_large) * 2 * q_b, 1e-9);
  // No base instance: the large queries have nowhere to go.
  EXPECT_EQ(ub.Bound({0, 3}), 0);
}

TEST(KairosUpperBoundTest, EdgeCases) {
  const ProfileSuite s = TwoTypeSuite();
  // Every query small: both types serve everything, throughputs add up.
  const KairosUpperBound small = Bound(s, {10, 100});
  EXPECT_NEAR(small.Bound({1, 2}), 2 * 2000.0 / 21 + 1000.0 / 6, 1e-9);
  // Sizes the base cannot serve within QoS are left out and reported.
  const KairosUpperBound tight = Bound(s, {10, 100, 1000, 1000}, Millis(30));
  EXPECT_DOUBLE_EQ(tight.unservable_fraction(), 0.5);
  EXPECT_EQ(tight.smallest_unservable_size(), 1000);
  // A QoS nothing meets for any size, and an empty sample, are errors naming the cause.
  LatencyPredictor p;
  ASSERT_TRUE(p.Init(s, 1).ok());
  auto none = KairosUpperBound::Create(p, s, 0, Millis(1), {100, 1000});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("met by no hardware type"), std::string::npos);
  EXPECT_FALSE(KairosUpperBound::Create(p, s, 0, Millis(100), {}).ok());
}

// The Kairos artifact ships the per-type numbers its allocator uses
// (allocator_profile.json, from the same latency files): the bound's inputs computed
// here from our converted profiles and the DeepRecSys size mix must agree with them.
TEST(KairosUpperBoundTest, MatchesTheArtifactsAllocatorProfile) {
  const ProfileSuite s = LoadSuite("kairos-recsys").value();
  LatencyPredictor p;
  ASSERT_TRUE(p.Init(s, 1).ok());
  // The artifact's DeepRecSys size mix.
  auto sampler = MakeQuerySizeSampler("deeprecsys").value();
  Rng rng = MakeRng(1, "test");
  std::vector<int> sizes;
  for (int i = 0; i < 20000; ++i) sizes.push_back(sampler->Sample(rng));
  struct Ref {
    const char* model;
    const char* type;
    double qps, small_ratio;
    int vio_batch;
  };
  // From allocator_profile.json (rm2 and dien; qps is at the type's own vio_batch).
  const Ref refs[] = {
      {"rm2", "c5n.2xlarge", 10.73, 0.989, 910}, {"rm2", "r5n.large", 10.39, 0.984, 870},
      {"rm2", "t3.xlarge", 6.39, 0.837, 400},    {"dien", "c5n.2xlarge", 69.52, 0.873, 460},
      {"dien", "r5n.large", 63.06, 0.857, 430},  {"dien", "t3.xlarge", 41.45, 0.741, 220}};
  for (const Ref& r : refs) {
    const TaskId t = *s.FindTask(r.model);
    const VariantId v = s.VariantsOfTask(t)[0];
    auto ub = KairosUpperBound::Create(p, s, v, s.tasks()[t].default_slo, sizes);
    ASSERT_TRUE(ub.ok());
    EXPECT_EQ(s.hardware()[ub->base()].name, "g4dn.xlarge");
    const auto& ts = ub->types()[*s.FindHardware(r.type)];
    SCOPED_TRACE(std::string(r.model) + " " + r.type);
    // Our sizes are integers; the artifact looks up multiples of 10.
    EXPECT_NEAR(ts.violation_size, r.vio_batch, 10);
    EXPECT_NEAR(ts.small_fraction, r.small_ratio, 0.03);
    // The others agree within 6%; DIEN on t3.xlarge is 9% above what the profile mean
    // gives (the artifact's qps was not derived from these files alone).
    EXPECT_NEAR(ts.qps_small, r.qps, 0.10 * r.qps);
  }
}

ConfigSpace SmallSpace() {
  ConfigSpace s;
  s.names = {"a", "b", "c"};
  s.price = {1.0, 0.4, 0.25};
  s.max_count = {3, 5, 8};
  s.min_count = {1, 0, 0};
  s.budget = 2.5;
  return s;
}

TEST(ConfigSpaceTest, EnumeratesExactlyTheConfigurationsWithinBudget) {
  const ConfigSpace s = SmallSpace();
  const auto configs = EnumerateConfigs(s);
  size_t brute = 0;
  for (int a = 0; a <= 3; ++a)
    for (int b = 0; b <= 5; ++b)
      for (int c = 0; c <= 8; ++c)
        if (a >= 1 && a * 1.0 + b * 0.4 + c * 0.25 <= 2.5 + 1e-9) ++brute;
  EXPECT_EQ(configs.size(), brute);
  std::set<InstanceCounts> unique(configs.begin(), configs.end());
  EXPECT_EQ(unique.size(), configs.size());
  for (const auto& c : configs) EXPECT_TRUE(s.Contains(c)) << FormatCounts(c);
  EXPECT_TRUE(IsSubConfig({1, 0, 2}, {1, 1, 2}));
  EXPECT_FALSE(IsSubConfig({1, 1, 2}, {1, 1, 2}));
  EXPECT_FALSE(IsSubConfig({2, 0, 0}, {1, 1, 2}));
  EXPECT_EQ(FormatMix(s, {1, 0, 2}), "a:1,c:2");
}

TEST(ConfigSpaceTest, BadBudgetsAndMaximaAreRefusedClearly) {
  const ProfileSuite suite = TwoTypeSuite();
  auto low = MakeConfigSpace(suite, 0.1, "");
  ASSERT_FALSE(low.ok());
  EXPECT_NE(low.status().message().find("below the cheapest instance"), std::string::npos);
  auto unknown = MakeConfigSpace(suite, 2, "tpu:3");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("tpu"), std::string::npos);
  EXPECT_FALSE(MakeConfigSpace(suite, 2, "gpu:x").ok());
  auto ok = MakeConfigSpace(suite, 2, "cpu:3");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->max_count, (std::vector<int>{4, 3}));  // gpu: floor(2 / 0.5)
}

TEST(SimilarityPickTest, TopThreeSameBaseTakesTheFirstElseTheCentroid) {
  std::vector<RankedConfig> same = {{{1, 5}, 9}, {{1, 4}, 8}, {{1, 3}, 7}, {{2, 0}, 6}};
  EXPECT_EQ(SimilarityPick(same, 0), 0u);
  // Different base counts in the top 3: the least summed squared distance wins.
  std::vector<RankedConfig> mixed = {{{3, 0}, 9}, {{1, 4}, 8}, {{1, 5}, 7}, {{1, 6}, 6}};
  // Sums: (3,0): 4+16 + 4+25 + 4+36 = 89; (1,4): 20+1+4 = 25; (1,5): 29+1+1 = 31; (1,6): 40+4+1.
  EXPECT_EQ(SimilarityPick(mixed, 0), 1u);
}

// A synthetic monotone throughput: more instances never hurt, with diminishing returns
// and an interaction term, so the optimum is a specific maximal configuration.
double Synthetic(const InstanceCounts& c) {
  return 10 * std::sqrt(c[0]) + 6 * std::sqrt(c[1] + 0.5 * c[0]) + 3 * std::sqrt(c[2]);
}

TEST(ConfigSearchTest, EveryMethodFindsTheOptimumAndPrunesSubConfigurations) {
  const ConfigSpace s = SmallSpace();
  const auto configs = EnumerateConfigs(s);
  double optimum = 0;
  for (const auto& c : configs) optimum = std::max(optimum, Synthetic(c));
  std::vector<double> loose(configs.size());  // a valid but loose bound
  for (size_t i = 0; i < configs.size(); ++i) loose[i] = Synthetic(configs[i]) * 1.15;
  for (const std::string& m : ConfigSearchMethods()) {
    for (uint64_t seed : {1, 2, 3}) {
      std::set<InstanceCounts> seen;
      ConfigEvaluator eval = [&](const InstanceCounts& c) -> StatusOr<double> {
        EXPECT_TRUE(seen.insert(c).second) << m << " evaluated " << FormatCounts(c) << " twice";
        return Synthetic(c);
      };
      SearchOptions o;
      o.seed = seed;
      auto r = RunConfigSearch(m, s, configs, loose, eval, o);
      ASSERT_TRUE(r.ok()) << m;
      SCOPED_TRACE(m + " seed " + std::to_string(seed));
      EXPECT_DOUBLE_EQ(r->best_value, optimum);
      EXPECT_GT(r->EvaluationsToReach(optimum), 0u);
      // Sub-configuration pruning: nothing evaluated after a super-configuration of it.
      for (size_t i = 0; i < r->evaluations.size(); ++i)
        for (size_t j = 0; j < i; ++j)
          EXPECT_FALSE(IsSubConfig(r->evaluations[i].counts, r->evaluations[j].counts));
      EXPECT_EQ(r->evaluations.size() + r->pruned, configs.size());
    }
  }
}

TEST(ConfigSearchTest, KairosPlusNeedsFewEvaluationsWithATightBound) {
  const ConfigSpace s = SmallSpace();
  const auto configs = EnumerateConfigs(s);
  std::vector<double> exact(configs.size()), loose(configs.size());
  double optimum = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    exact[i] = Synthetic(configs[i]);
    loose[i] = exact[i] * 1.15;
    optimum = std::max(optimum, exact[i]);
  }
  ConfigEvaluator eval = [](const InstanceCounts& c) -> StatusOr<double> { return Synthetic(c); };
  auto tight = KairosPlusSearch(configs, exact, eval, SearchOptions{});
  ASSERT_TRUE(tight.ok());
  // The bound is the value: the first evaluation is the optimum and prunes the rest.
  EXPECT_EQ(tight->EvaluationsToReach(optimum), 1u);
  EXPECT_EQ(tight->evaluations.size(), 1u);
  auto kplus = KairosPlusSearch(configs, loose, eval, SearchOptions{});
  ASSERT_TRUE(kplus.ok());
  EXPECT_EQ(kplus->EvaluationsToReach(optimum), 1u);
  EXPECT_LT(kplus->evaluations.size(), configs.size() / 2);
  // Random search needs more evaluations on average to reach the optimum.
  double random_mean = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SearchOptions o;
    o.seed = seed;
    random_mean += RandomSearch(configs, eval, o)->EvaluationsToReach(optimum) / 20.0;
  }
  EXPECT_GT(random_mean, 2.0);
}

TEST(ConfigSearchTest, StopsAtTheTargetAndPropagatesEvaluatorErrors) {
  const ConfigSpace s = SmallSpace();
  const auto configs = EnumerateConfigs(s);
  ConfigEvaluator eval = [](const InstanceCounts& c) -> StatusOr<double> { return Synthetic(c); };
  SearchOptions o;
  o.stop_at = 0;  // any value reaches it
  auto r = RandomSearch(configs, eval, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->evaluations.size(), 1u);
  o = SearchOptions{};
  o.max_evaluations = 4;
  EXPECT_EQ(GeneticSearch(s, configs, eval, o)->evaluations.size(), 4u);
  ConfigEvaluator failing = [](const InstanceCounts&) -> StatusOr<double> {
    return InternalError("simulation failed");
  };
  auto f = AnnealingSearch(configs, failing, SearchOptions{});
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("simulation failed"), std::string::npos);
  EXPECT_FALSE(RunConfigSearch("bayes", s, configs, {}, eval, SearchOptions{}).ok());
  EXPECT_FALSE(KairosPlusSearch(configs, {1.0}, eval, SearchOptions{}).ok());
  EXPECT_FALSE(RandomSearch({}, eval, SearchOptions{}).ok());
}

}  // namespace
}  // namespace sloserve

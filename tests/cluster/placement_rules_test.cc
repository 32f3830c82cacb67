// The shared decision rules (cluster/placement_rules.h) on proxies described by hand: the
// machine adaptive acts on is the one its estimate was for, the registry's two ways of
// spawning, and the policy each record names.
#include "sloserve/cluster/placement_rules.h"

#include <gtest/gtest.h>

#include <set>

#include "sloserve/cluster/cluster_experiment.h"

namespace sloserve {
namespace {

// t5-small: inference 1 s, cold start 3 s, no CPU stages.
const ModelTimes kSmall{1.0, 0.0, 0.0, 3.0};

ProxyState Proxy(bool free, bool holds, int ongoing, double remaining_load, double backlog) {
  ProxyState p;
  p.free = free;
  p.can_hold = true;
  p.holds = holds;
  p.idle = free && ongoing == 0;
  p.ongoing = ongoing;
  p.remaining_load = remaining_load;
  p.backlog = backlog;
  p.room_mb = 1000;
  return p;
}

// Proxy 0 is warm and busy for 1 more second (one request ongoing); proxy 1 is free but
// 30 s into nothing of a load of the model ahead of demand (prefetch). adaptive prices
// waiting for proxy 0 (2 s) below the registry over a 5 s network (6 s) and there is no
// cold machine: it chooses with-queue for proxy 0. Before the fix it took "any free
// machine holding the model", proxy 1, which the estimate had priced at 30 s.
TEST(PlacementRulesTest, AdaptiveWaitsForTheWarmProxyItsEstimateWasFor) {
  std::vector<ProxyState> p = {Proxy(false, true, 1, 0, 1.0), Proxy(true, true, 0, 30, 30)};
  Rng rng = MakeRng(1, "test");
  for (ClusterPolicy policy : {ClusterPolicy::kAdaptive, ClusterPolicy::kPrefetch}) {
    const PlacementChoice d = DecidePlacement(policy, p, kSmall, {3, 5.0}, rng);
    EXPECT_EQ(d.chosen, ClusterPolicy::kColocationQueue);
    EXPECT_DOUBLE_EQ(d.estimates.queue, 2.0);
    EXPECT_FALSE(d.place) << "placed on proxy " << d.proxy << ", not the warm proxy 0";
  }
  // Once proxy 0 is free, the request runs there (locally), not on proxy 1.
  p[0] = Proxy(true, true, 0, 0, 0);
  const PlacementChoice d = DecidePlacement(ClusterPolicy::kAdaptive, p, kSmall, {3, 5.0}, rng);
  ASSERT_TRUE(d.place);
  EXPECT_EQ(d.proxy, 0);
  EXPECT_EQ(d.machine, 0);
}

// The registry's warm proxy 0 has free cores. Spawning warm (the default), the request
// always runs there; spawning at random (the thesis), it runs on any of the 4 free
// machines, querying proxy 0 (remotely unless the draw is machine 0).
TEST(PlacementRulesTest, RegistrySpawnsWarmOrRandom) {
  std::vector<ProxyState> p = {Proxy(true, true, 0, 0, 0), Proxy(true, false, 0, 0, 0),
                               Proxy(true, false, 0, 0, 0), Proxy(true, false, 0, 0, 0)};
  Rng rng = MakeRng(1, "test");
  std::set<int> machines;
  for (int i = 0; i < 200; ++i) {
    const PlacementChoice warm = DecidePlacement(ClusterPolicy::kRegistry, p, kSmall, {3, 5}, rng);
    EXPECT_EQ(warm.machine, 0);
    EXPECT_EQ(warm.proxy, 0);
    PlacementParams random{3, 5};
    random.registry_spawn_random = true;
    const PlacementChoice r = DecidePlacement(ClusterPolicy::kRegistry, p, kSmall, random, rng);
    ASSERT_TRUE(r.place);
    EXPECT_EQ(r.proxy, 0);
    machines.insert(r.machine);
  }
  EXPECT_EQ(machines, (std::set<int>{0, 1, 2, 3}));
}

// Every record names the policy that placed its request: the fixed policy itself (before
// the fix, `random` for all of them), adaptive's choice for adaptive.
TEST(PlacementRulesTest, RecordsNameThePolicyThatPlacedEachRequest) {
  const std::string yaml = R"(
suite: t5-translation
cluster: {machines: 4, network_s: 0.5}
workload:
  phases: [{model: t5-small, count: 1}, {model: t5-small, count: 3, concurrent: true}]
  proc_cores: 4
)";
  for (const std::string& name : ClusterPolicyNames()) {
    auto exp = RunClusterExperiment(yaml, "test", {"policies=" + name});
    ASSERT_TRUE(exp.ok()) << exp.status().message();
    ASSERT_EQ(exp->rows.size(), 1u);
    const auto& records = exp->rows[0].first_run.records;
    ASSERT_EQ(records.size(), 4u) << name;
    const ClusterPolicy policy = *ParseClusterPolicy(name);
    for (const auto& r : records) {
      if (policy == ClusterPolicy::kAdaptive || policy == ClusterPolicy::kPrefetch) {
        EXPECT_TRUE(r.chosen == ClusterPolicy::kColocation ||
                    r.chosen == ClusterPolicy::kColocationQueue ||
                    r.chosen == ClusterPolicy::kRegistry)
            << name << " request " << r.id << ": " << ClusterPolicyName(r.chosen);
      } else {
        EXPECT_EQ(r.chosen, policy)
            << name << " request " << r.id << " recorded as " << ClusterPolicyName(r.chosen);
      }
    }
  }
}

}  // namespace
}  // namespace sloserve

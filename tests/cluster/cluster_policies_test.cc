// Each placement policy against hand-computed cases: the thesis' section 6.4 workloads
// (t5-small: cold start 3 s, inference 1 s, 8 machines of 4 cores, each request all 4),
// random placement's machine choice, the registry's target and network time, and memory.
#include <gtest/gtest.h>

#include "sloserve/cluster/cluster_experiment.h"

namespace sloserve {
namespace {

const char* kWin641 = R"(
suite: t5-translation
cluster: {machines: 8, network_s: 5}
workload:
  phases: [{model: t5-small, count: 2, concurrent: true}]
  proc_cores: 4
  post_s: 5
)";

const char* kWin642 = R"(
suite: t5-translation
cluster: {machines: 8, network_s: 5}
workload:
  phases: [{model: t5-small, count: 1}, {model: t5-small, count: 2, concurrent: true}]
  proc_cores: 4
)";

const char* kWin643 = R"(
suite: t5-translation
cluster: {machines: 8, network_s: 0.1}
workload:
  phases: [{model: t5-small, count: 1}, {model: t5-small, count: 2, concurrent: true}]
  proc_cores: 4
  post_s: 5
)";

ClusterRow RunOne(const std::string& yaml, const std::string& policy,
                  std::vector<std::string> sets = {}) {
  sets.push_back("policies=" + policy);
  auto exp = RunClusterExperiment(yaml, "test", sets);
  EXPECT_TRUE(exp.ok()) << exp.status().message();
  if (!exp.ok() || exp->rows.size() != 1) return {};
  return exp->rows[0];
}

// 6.4.1: request A starts cold on a machine (3 + 1 + 5 = 9 s). B under colocation starts
// cold on another (9 s); with queuing waits for A's machine (9 + 1 + 5 = 15 s); registry
// sends it over the network (5 s) to A's proxy, free again at 4 s: 5 + 1 + 5 = 11 s.
TEST(ClusterPoliciesTest, Section641HandComputed) {
  EXPECT_DOUBLE_EQ(RunOne(kWin641, "colocation").makespan_s, 9);
  EXPECT_DOUBLE_EQ(RunOne(kWin641, "colocation").cold_starts, 2);
  EXPECT_DOUBLE_EQ(RunOne(kWin641, "colocation_queue").makespan_s, 15);
  EXPECT_DOUBLE_EQ(RunOne(kWin641, "colocation_queue").cold_starts, 1);
  EXPECT_DOUBLE_EQ(RunOne(kWin641, "registry").makespan_s, 11);
  const ClusterRow a = RunOne(kWin641, "adaptive");
  EXPECT_DOUBLE_EQ(a.makespan_s, 9);  // matches the winner
}

// 6.4.2: the warming request takes 3 + 1 = 4 s; B1 runs warm (1 s). B2: colocation starts
// cold elsewhere (4 s, ends at 8); queuing waits for B1 (ends at 6); registry pays 5 s
// of network (ends at 10).
TEST(ClusterPoliciesTest, Section642HandComputed) {
  EXPECT_DOUBLE_EQ(RunOne(kWin642, "colocation").makespan_s, 8);
  EXPECT_DOUBLE_EQ(RunOne(kWin642, "colocation_queue").makespan_s, 6);
  EXPECT_DOUBLE_EQ(RunOne(kWin642, "registry").makespan_s, 10);
  const ClusterRow a = RunOne(kWin642, "adaptive");
  EXPECT_DOUBLE_EQ(a.makespan_s, 6);
  EXPECT_EQ(a.chose_queue, 2);
}

// 6.4.3: warming 3 + 1 + 5 = 9 s; B1 warm 6 s (ends 15). B2: colocation cold 9 s (ends
// 18); queuing waits for B1's cores (ends 21); registry: 0.1 s transfer, waits for B1's
// inference (until 10), 1 + 5 s: ends 16.
TEST(ClusterPoliciesTest, Section643HandComputed) {
  EXPECT_DOUBLE_EQ(RunOne(kWin643, "colocation").makespan_s, 18);
  EXPECT_DOUBLE_EQ(RunOne(kWin643, "colocation_queue").makespan_s, 21);
  EXPECT_NEAR(RunOne(kWin643, "registry").makespan_s, 16, 1e-9);
  const ClusterRow a = RunOne(kWin643, "adaptive");
  EXPECT_NEAR(a.makespan_s, 16, 1e-9);
  EXPECT_EQ(a.chose_registry, 1);
}

// Random placement goes to a machine with free cores: with 2 machines and both requests
// taking all cores, the second lands on the other machine whatever the seed.
TEST(ClusterPoliciesTest, RandomPlacesOnlyOnMachinesWithFreeCores) {
  const std::string yaml = R"(
suite: t5-translation
cluster: {machines: 2}
workload:
  phases: [{model: t5-small, count: 2, concurrent: true}]
  proc_cores: 4
)";
  for (int seed = 1; seed <= 5; ++seed) {
    const ClusterRow r = RunOne(yaml, "random", {"seed=" + std::to_string(seed)});
    ASSERT_EQ(r.first_run.records.size(), 2u);
    EXPECT_NE(r.first_run.records[0].machine, r.first_run.records[1].machine);
    EXPECT_DOUBLE_EQ(r.makespan_s, 4);
  }
}

// Sequential requests: colocation keeps one warm machine (1 cold start); random spreads
// them (more than one over 10 requests on 8 machines for every seed tried).
TEST(ClusterPoliciesTest, ColocationColdStartsOnceRandomMoreOften) {
  const std::string yaml = R"(
suite: t5-translation
runs: 20
cluster: {machines: 8}
workload: {model: t5-small, count: 10}
)";
  const ClusterRow c = RunOne(yaml, "colocation");
  EXPECT_DOUBLE_EQ(c.cold_starts, 1);
  EXPECT_DOUBLE_EQ(c.makespan_s, 3 + 10 * 1.0);
  const ClusterRow r = RunOne(yaml, "random");
  EXPECT_GT(r.cold_starts_min, 1);
  EXPECT_NEAR(r.makespan_s, 10 + 3 * r.cold_starts, 1e-6);
}

// The registry queries the first warm proxy under target_ongoing_requests; over it, the
// request's own machine loads the model. 1 machine-wide core each, 1 warm machine: with
// target 1 the second concurrent request cannot use the warm proxy and cold-starts.
TEST(ClusterPoliciesTest, RegistryRespectsTargetOngoingRequests) {
  const std::string yaml = R"(
suite: t5-translation
cluster: {machines: 2, network_s: 0.5}
workload:
  phases: [{model: t5-small, count: 1}, {model: t5-small, count: 2, concurrent: true}]
  proc_cores: 4
)";
  // target 3: B1 local on the warm machine (1 s), B2 remote: max(0.5, 1) + 1 = 2 s.
  const ClusterRow wide = RunOne(yaml, "registry", {"cluster.target_ongoing_requests=3"});
  EXPECT_DOUBLE_EQ(wide.cold_starts, 1);
  EXPECT_DOUBLE_EQ(wide.makespan_s, 4 + 2);
  // target 1: B2 finds no proxy under the target and loads locally: 3 + 1 = 4 s.
  const ClusterRow narrow = RunOne(yaml, "registry", {"cluster.target_ongoing_requests=1"});
  EXPECT_DOUBLE_EQ(narrow.cold_starts, 2);
  EXPECT_DOUBLE_EQ(narrow.makespan_s, 4 + 4);
}

// No request is placed on a machine whose cache cannot hold its model: machine m0 holds
// 500 MB, t5-base is 892 MB, so every t5-base request runs on m1, under every policy.
TEST(ClusterPoliciesTest, NeverPlacesOnAMachineThatCannotHoldTheModel) {
  const std::string yaml = R"(
suite: t5-translation
cluster:
  machines: [{name: small, cache_mb: 500}, {name: big}]
  network_s: 0.2
workload:
  phases: [{model: t5-base, count: 6, concurrent: true}, {model: t5-small, count: 4, concurrent: true}]
)";
  for (const std::string& p : ClusterPolicyNames()) {
    const ClusterRow r = RunOne(yaml, p);
    ASSERT_EQ(r.first_run.records.size(), 10u) << p;
    EXPECT_EQ(r.refused, 0) << p;
    for (const auto& rec : r.first_run.records) {
      if (rec.model == 0) {
        EXPECT_EQ(rec.proxy, 1) << p << " request " << rec.id;
      }
      EXPECT_GE(rec.exit_s, rec.arrival_s) << p;
    }
  }
}

// Multiplexed: one machine, t5-small, t5-base, t5-small one after another. With at most
// 1 model per replica each request loads its model (evicting the other): (3 + 1) +
// (6 + 1.2) + (3 + 1) = 15.2 s, 3 cold starts, 2 evictions; with 2, the third is warm:
// 4 + 7.2 + 1 = 12.2 s.
TEST(ClusterPoliciesTest, MultiplexedKeepsAtMostKModelsPerReplica) {
  const std::string yaml = R"(
suite: t5-translation
cluster: {machines: 1}
workload:
  phases: [{model: t5-small, count: 1}, {model: t5-base, count: 1}, {model: t5-small, count: 1}]
)";
  const ClusterRow one = RunOne(yaml, "multiplexed", {"cluster.max_models_per_replica=1"});
  EXPECT_NEAR(one.makespan_s, 15.2, 1e-9);
  EXPECT_DOUBLE_EQ(one.cold_starts, 3);
  EXPECT_DOUBLE_EQ(one.evictions, 2);
  const ClusterRow two = RunOne(yaml, "multiplexed", {"cluster.max_models_per_replica=2"});
  EXPECT_NEAR(two.makespan_s, 12.2, 1e-9);
  EXPECT_DOUBLE_EQ(two.cold_starts, 2);
  EXPECT_DOUBLE_EQ(two.evictions, 0);
}

// Prefetch, window 1: each arrival's model has share 1, so it wants a warm proxy on both
// machines. Request 1 (t = 0): m0 starts loading ahead of it (3 s); the request, estimated
// equal everywhere (4 s), queues for m0 and waits for that load (a cold start), ending at
// 4 s. Request 2 (t = 4): m1 is loaded ahead (a second prefetch nobody waits for); the
// request runs warm on m0 and ends at 5 s.
TEST(ClusterPoliciesTest, PrefetchLoadsPopularModelsOnIdleMachines) {
  const std::string yaml = R"(
suite: t5-translation
cluster: {machines: 2, prefetch_window: 1, prefetch_min_share: 0.5}
workload: {model: t5-small, count: 2}
)";
  const ClusterRow r = RunOne(yaml, "prefetch");
  EXPECT_DOUBLE_EQ(r.makespan_s, 5);
  EXPECT_DOUBLE_EQ(r.prefetch_loads, 2);
  EXPECT_DOUBLE_EQ(r.cold_starts, 1);
  ASSERT_EQ(r.first_run.records.size(), 2u);
  EXPECT_TRUE(r.first_run.records[0].cold);
  EXPECT_FALSE(r.first_run.records[1].cold);
  EXPECT_EQ(r.first_run.records[1].proxy, 0);
}

// The multi-model workload: every request completes exactly once, caches evict, and the
// policies run to the end.
TEST(ClusterPoliciesTest, ZipfWorkloadCompletesEveryRequestUnderEveryPolicy) {
  const std::string yaml = R"(
suite: t5-translation
cluster: {machines: 4, cache_mb: 2000, network_s: 0.05}
workload:
  kind: zipf
  models: [t5-small, t5-base]
  copies: 4
  rate_qps: 2
  requests: 300
  pre_s: 0.1
  post_s: 0.1
)";
  for (const std::string& p : ClusterPolicyNames()) {
    const ClusterRow r = RunOne(yaml, p);
    EXPECT_EQ(r.requests, 300) << p;
    EXPECT_EQ(r.refused, 0) << p;
    EXPECT_GT(r.cold_starts, 0) << p;
    for (const auto& rec : r.first_run.records) EXPECT_GT(rec.exit_s, rec.arrival_s) << p;
  }
  EXPECT_GT(RunOne(yaml, "prefetch").prefetch_loads, 0);
}

}  // namespace
}  // namespace sloserve

// The analytical model (thesis section 6.5): its formulas on a hand-computed case, and
// its three estimates at the contested request of each section 6.4 workload against the
// latency the simulation gives that request under each policy (within 10%).
#include "sloserve/cluster/analytical_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sloserve/cluster/cluster_experiment.h"

namespace sloserve {
namespace {

TEST(AnalyticalModelTest, ThesisFormulasWhenTheWarmProxyIsResident) {
  // T_i = 1, T_pre = 0, T_post = 5, T_cs = 3, T_n = 2, n = 2 ongoing.
  const ModelTimes t{1, 0, 5, 3};
  const WarmProxy warm{2, 0, 2 * 1.0};  // backlog: its 2 requests' inference
  const WarmProxy idle{0, 0, 0};
  const LatencyEstimates e = EstimateLatencies(t, 2, &warm, &warm, &idle);
  EXPECT_DOUBLE_EQ(e.colocation, std::max(3.0 + 1 + 5, 2 * (1.0 + 5)));  // 12
  EXPECT_DOUBLE_EQ(e.queue, 3 * (1.0 + 5));                              // (n+1)(T_i+T_p)
  EXPECT_DOUBLE_EQ(e.registry, std::max(2.0, 2 * 1.0) + 1 + 5);          // 8
  // Nothing warm: only colocation can be estimated.
  const LatencyEstimates none = EstimateLatencies(t, 2, nullptr, nullptr, &idle);
  EXPECT_DOUBLE_EQ(none.colocation, 9);
  // A cold machine whose proxy has 4 s of other work ahead.
  const WarmProxy busy{1, 0, 4};
  EXPECT_DOUBLE_EQ(EstimateLatencies(t, 2, nullptr, nullptr, &busy).colocation, 13);
  EXPECT_TRUE(std::isinf(none.queue));
  EXPECT_TRUE(std::isinf(none.registry));
}

struct Workload {
  const char* name;
  const char* yaml;
};

// For the last request of each workload (the contested one), the adaptive run records
// the three estimates at its arrival; each fixed policy's run gives its simulated latency.
TEST(AnalyticalModelTest, EstimatesMatchSimulatedLatenciesOnTheSection64Workloads) {
  const Workload workloads[] = {
      {"6.4.1", R"(
suite: t5-translation
cluster: {machines: 8, network_s: 5}
workload: {phases: [{model: t5-small, count: 2, concurrent: true}], proc_cores: 4, post_s: 5}
)"},
      {"6.4.2", R"(
suite: t5-translation
cluster: {machines: 8, network_s: 5}
workload:
  phases: [{model: t5-small, count: 1}, {model: t5-small, count: 2, concurrent: true}]
  proc_cores: 4
)"},
      {"6.4.3", R"(
suite: t5-translation
cluster: {machines: 8, network_s: 0.1}
workload:
  phases: [{model: t5-small, count: 1}, {model: t5-small, count: 2, concurrent: true}]
  proc_cores: 4
  post_s: 5
)"},
  };
  for (const Workload& w : workloads) {
    auto exp = RunClusterExperiment(w.yaml, w.name,
                                    {"policies=[adaptive,colocation,colocation_queue,registry]"});
    ASSERT_TRUE(exp.ok()) << exp.status().message();
    ASSERT_EQ(exp->rows.size(), 4u);
    const auto& adaptive = exp->rows[0].first_run.records;
    const LatencyEstimates e = adaptive.back().estimates;
    const double estimate[] = {e.colocation, e.queue, e.registry};
    for (int i = 0; i < 3; ++i) {
      const ClusterRow& row = exp->rows[static_cast<size_t>(i) + 1];
      const double simulated = row.first_run.records.back().latency_s();
      EXPECT_NEAR(estimate[i], simulated, 0.1 * simulated)
          << w.name << " " << row.policy << ": estimate " << estimate[i] << " s, simulated "
          << simulated << " s";
    }
  }
}

}  // namespace
}  // namespace sloserve

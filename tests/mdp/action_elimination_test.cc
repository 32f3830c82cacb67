// Exact action elimination in value iteration (docs/ramsis-mdp.md#action-elimination): the
// solver with it must return the bits it returns without it (same choices, sweeps, gain
// bounds and values: it only skips pairs that cannot be a state's best), and must skip some.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mdp/mdp_test_util.h"
#include "sloserve/mdp/model.h"
#include "sloserve/mdp/policy.h"
#include "sloserve/mdp/solver.h"

namespace sloserve::mdp {
namespace {

// Returns the pairs evaluated with elimination / without it; *values (optional): the values.
double ExpectSameBitsWithAndWithoutElimination(const MdpModel& m, SolverOptions so,
                                               const std::vector<double>* warm = nullptr,
                                               std::vector<double>* values = nullptr) {
  so.eliminate_actions = true;
  const SolveResult fast = Solve(m, so, warm);
  so.eliminate_actions = false;
  const SolveResult full = Solve(m, so, warm);
  EXPECT_EQ(fast.sweeps, full.sweeps);
  EXPECT_EQ(fast.converged, full.converged);
  EXPECT_EQ(fast.gain_lo, full.gain_lo);
  EXPECT_EQ(fast.gain_hi, full.gain_hi);
  EXPECT_EQ(fast.choice, full.choice);
  EXPECT_EQ(fast.values, full.values);  // bitwise: == on every double
  EXPECT_EQ(full.pair_evaluations,
            static_cast<int64_t>(full.sweeps) * static_cast<int64_t>(m.pairs().size()));
  EXPECT_LE(fast.pair_evaluations, full.pair_evaluations);
  if (values != nullptr) *values = fast.values;
  return static_cast<double>(fast.pair_evaluations) / static_cast<double>(full.pair_evaluations);
}

TEST(ActionElimination, SmallInstancesGiveTheSameBits) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  for (int workers : {1, 3}) {
    for (BatchingKind b : {BatchingKind::kMaximal, BatchingKind::kVariable}) {
      for (double load : {60.0, 250.0, 600.0}) {
        SCOPED_TRACE("workers " + std::to_string(workers) + " " + BatchingName(b) + " load " +
                     std::to_string(load));
        MdpOptions o = testing::SmallOptions(load, workers);
        o.batching = b;
        auto m = MdpModel::Build(suite, o);
        ASSERT_TRUE(m.ok()) << m.status().ToString();
        ExpectSameBitsWithAndWithoutElimination(*m, o.solver);
        SolverOptions sweeps = o.solver;  // the authors' criterion: a fixed number of sweeps
        sweeps.criterion = Criterion::kUndiscountedSweeps;
        ExpectSameBitsWithAndWithoutElimination(*m, sweeps);
      }
    }
  }
}

// The paper's image setting (9 models, 60 workers, SLO 150 ms; fewer slack levels and a
// shorter queue, fast enough under the sanitizers): cold at 800 qps, then 3,600 qps warm
// started from the 800 qps values, as policy sets do.
TEST(ActionElimination, ImageSuiteGivesTheSameBitsAndSkipsPairs) {
  const ProfileSuite& suite = sloserve::testing::EmbeddedSuite("ramsis-image");
  std::vector<double> neighbour;
  for (double load : {800.0, 3600.0}) {
    SCOPED_TRACE("image load " + std::to_string(load));
    const MdpOptions o = testing::SmallImageOptions(load);
    auto m = MdpModel::Build(suite, o);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const std::vector<double> warm = neighbour;
    const double share = ExpectSameBitsWithAndWithoutElimination(
        *m, o.solver, warm.empty() ? nullptr : &warm, &neighbour);
    EXPECT_LT(share, 0.95) << "elimination skipped almost nothing";
  }
}

}  // namespace
}  // namespace sloserve::mdp

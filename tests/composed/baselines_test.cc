// The baselines as restrictions of the composed problem: fixed variants and fixed
// hardware leave one allowed candidate set per model (and the MILP respects it), the
// defaults (most accurate variant, most capacity per $), and the static equal-share
// sizing (at least one worker, overload when the share is short).
#include "sloserve/composed/baselines.h"

#include <gtest/gtest.h>

#include "composed/candidates.h"
#include "sloserve/composed/milp.h"

namespace sloserve {
namespace {

using testing::Candidate;

// Two models; model 0 has variants 0 (70%) and 1 (80%) on types 0 ($1/h) and 1 ($3/h),
// model 1 one variant 2 on type 0 only.
ComposedProblem TwoModels() {
  ComposedProblem p;
  p.lambda_rps = {60, 10};
  p.budget_usd_per_h = 12;
  p.headroom = 1;
  p.candidates = {Candidate(0, 0, 0, 70, 30, 1), Candidate(0, 0, 1, 70, 120, 3),
                  Candidate(0, 1, 0, 80, 10, 1), Candidate(0, 1, 1, 80, 40, 3),
                  Candidate(1, 2, 0, 90, 20, 1)};
  return p;
}

TEST(ComposedBaselinesTest, Defaults) {
  const ComposedProblem p = TwoModels();
  EXPECT_EQ(DefaultFixedVariant(p, 0), 1u);
  EXPECT_EQ(DefaultFixedVariant(p, 1), 2u);
  EXPECT_EQ(DefaultFixedVariant(p, 2), kNoId);
  // Variant 1: 10 rps per $ on type 0, 13.3 on type 1; variant 0: 30 and 40.
  EXPECT_EQ(DefaultFixedHardware(p, 0, 1), 1u);
  EXPECT_EQ(DefaultFixedHardware(p, 0, 0), 1u);
  EXPECT_EQ(DefaultFixedHardware(p, 1, 2), 0u);
  EXPECT_EQ(DefaultFixedHardware(p, 1, 0), kNoId);
}

TEST(ComposedBaselinesTest, RestrictionsLimitTheCandidates) {
  const ComposedProblem p = TwoModels();
  ComposedRestrictions r;
  r.fixed_variant = {0, kNoId};
  ComposedProblem fixed = RestrictComposedProblem(p, r);
  ASSERT_EQ(fixed.candidates.size(), 3u);
  auto plan = SolveComposedMilp(fixed);
  ASSERT_TRUE(plan.ok());
  for (size_t i = 0; i < fixed.candidates.size(); ++i) {
    if (fixed.candidates[i].model == 0) {
      EXPECT_EQ(fixed.candidates[i].variant, 0u);
    }
  }
  EXPECT_NEAR(plan->served_rps[0], 60, 1e-9);
  r.fixed_variant.clear();
  r.fixed_hardware = {0};  // model 1 left planned (a missing entry)
  fixed = RestrictComposedProblem(p, r);
  ASSERT_EQ(fixed.candidates.size(), 3u);
  for (const ComposedCandidate& c : fixed.candidates) EXPECT_EQ(c.hardware, 0u);
  plan = SolveComposedMilp(fixed);
  ASSERT_TRUE(plan.ok());
  EXPECT_LE(plan->cost_usd_per_h, 12);
  EXPECT_FALSE(plan->overloaded);
}

TEST(ComposedBaselinesTest, StaticGivesEachModelAnEqualShare) {
  ComposedRestrictions r;
  r.fixed_variant = {1, 2};
  r.fixed_hardware = {1, 0};
  const ComposedProblem p = RestrictComposedProblem(TwoModels(), r);
  auto plan = ComposedStaticPlan(p);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  // $6/h each: two $3/h workers of model 0 (80 rps), six $1/h of model 1.
  EXPECT_EQ(plan->allocations[0].workers, 2);
  EXPECT_EQ(plan->allocations[1].workers, 6);
  EXPECT_DOUBLE_EQ(plan->cost_usd_per_h, 12);
  EXPECT_FALSE(plan->overloaded);
  EXPECT_NEAR(plan->served_rps[0], 60, 1e-9);
  // A share below one worker still buys one (over the budget), and a share that does not
  // cover the load leaves a shortfall.
  ComposedProblem poor = p;
  poor.budget_usd_per_h = 2;
  plan = ComposedStaticPlan(poor);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->allocations[0].workers, 1);
  EXPECT_EQ(plan->allocations[1].workers, 1);
  EXPECT_TRUE(plan->overloaded);
  EXPECT_NEAR(plan->shortfall_rps[0], 20, 1e-9);
  // More than one candidate per model: not a static deployment.
  EXPECT_FALSE(ComposedStaticPlan(TwoModels()).ok());
}

}  // namespace
}  // namespace sloserve

// The composed problem (composed/problem.h): the GLPK MILP against the exhaustive oracle
// on seeded random small instances (in and out of overload, with per-type limits and
// workers running now), the plan's invariants (budget, per-type limits, quotas within
// capacity and summing to each model's load), the accuracy/cost trade-off, the loading
// cost, overload, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "composed/candidates.h"
#include "sloserve/composed/exhaustive.h"
#include "sloserve/composed/milp.h"
#include "sloserve/composed/problem.h"

namespace sloserve {
namespace {

using testing::Candidate;

// Invariants of any plan of `p`.
void ExpectValidPlan(const ComposedProblem& p, const ComposedPlan& plan) {
  ASSERT_EQ(plan.allocations.size(), p.candidates.size());
  std::vector<int> workers;
  std::vector<double> quota(p.lambda_rps.size(), 0);
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    const ComposedAllocation& a = plan.allocations[i];
    workers.push_back(a.workers);
    EXPECT_GE(a.quota_rps, 0);
    EXPECT_LE(a.quota_rps, p.headroom * p.candidates[i].capacity_rps * a.workers + 1e-9);
    quota[p.candidates[i].model] += a.quota_rps;
  }
  EXPECT_TRUE(ComposedWithinLimits(p, workers));
  EXPECT_LE(plan.cost_usd_per_h, p.budget_usd_per_h + 1e-9);
  for (size_t m = 0; m < p.lambda_rps.size(); ++m) {
    EXPECT_NEAR(quota[m] + plan.shortfall_rps[m], p.lambda_rps[m], 1e-6);
  }
}

ComposedProblem RandomProblem(std::mt19937& rng) {
  std::uniform_int_distribution<int> models_d(1, 3), types_d(1, 2), variants_d(1, 2);
  std::uniform_real_distribution<double> u(0, 1);
  ComposedProblem p;
  const int models = models_d(rng);
  const int types = types_d(rng);
  std::vector<double> price(types);
  for (double& x : price) x = 0.5 + std::round(u(rng) * 4) * 0.5;
  VariantId next = 0;
  for (int m = 0; m < models; ++m) {
    p.lambda_rps.push_back(std::round(u(rng) * 60));
    const int vs = variants_d(rng);
    for (int v = 0; v < vs; ++v, ++next) {
      const double acc = u(rng) < 0.2 ? 0 : 60 + std::round(u(rng) * 30);
      for (int h = 0; h < types; ++h) {
        if (u(rng) < 0.25) continue;  // not profiled there
        p.candidates.push_back(Candidate(m, next, h, acc, 5 + std::round(u(rng) * 25), price[h],
                                         std::round(u(rng) * 10), u(rng) < 0.3 ? 1 : 0));
      }
    }
  }
  p.budget_usd_per_h = 2 + std::round(u(rng) * 12);
  p.headroom = u(rng) < 0.5 ? 0.8 : 1.0;
  if (u(rng) < 0.3) p.max_workers.assign(types, 1 + static_cast<int>(u(rng) * 3));
  p.weights.beta = u(rng) < 0.5 ? 0.05 : 0.3;
  p.min_one_worker = u(rng) < 0.8;
  return p;
}

TEST(ComposedSolverTest, MilpMatchesExhaustiveOnRandomSmallInstances) {
  std::mt19937 rng(20261129);
  int overloaded = 0, compared = 0;
  for (int k = 0; k < 300; ++k) {
    const ComposedProblem p = RandomProblem(rng);
    auto exact = SolveComposedExhaustive(p, 2'000'000);
    if (!exact.ok()) continue;  // too many to enumerate
    auto milp = SolveComposedMilp(p);
    ASSERT_TRUE(milp.ok()) << milp.status().ToString();
    ASSERT_TRUE(milp->optimal);
    SCOPED_TRACE("instance " + std::to_string(k));
    EXPECT_NEAR(milp->objective, exact->objective, 1e-6);
    EXPECT_EQ(milp->overloaded, exact->overloaded);
    ExpectValidPlan(p, *milp);
    ExpectValidPlan(p, *exact);
    overloaded += exact->overloaded;
    ++compared;
  }
  EXPECT_GE(compared, 200);
  EXPECT_GE(overloaded, 30);  // the overload path is exercised (126 of 297)
  EXPECT_LE(overloaded, compared - 100);
}

// Two models on two types: accuracy is worth its price only when beta is small.
TEST(ComposedSolverTest, TradesAccuracyAgainstCost) {
  ComposedProblem p;
  p.lambda_rps = {40, 10};
  p.budget_usd_per_h = 10;
  p.headroom = 1;
  p.candidates = {Candidate(0, 0, 0, 70, 40, 1),  // cheap, less accurate
                  Candidate(0, 1, 1, 80, 20, 2),  // 2 workers needed, $4/h
                  Candidate(1, 2, 0, 0, 10, 1)};  // accuracy unknown: cost only
  p.weights.beta = 0.05;  // $3/h more buys 10 points of AA (model 1 has no accuracy)
  auto plan = SolveComposedMilp(p);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->allocations[0].workers, 0);
  EXPECT_EQ(plan->allocations[1].workers, 2);
  EXPECT_EQ(plan->allocations[2].workers, 1);
  EXPECT_DOUBLE_EQ(plan->cost_usd_per_h, 5);
  EXPECT_NEAR(plan->served_rps[0], 40, 1e-9);
  EXPECT_NEAR(plan->average_accuracy, (80 * 40 + 0 * 10) / 50.0, 1e-9);
  p.weights.beta = 0.5;  // now $3/h costs 0.15 against 0.10 of accuracy
  plan = SolveComposedMilp(p);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->allocations[0].workers, 1);
  EXPECT_EQ(plan->allocations[1].workers, 0);
  EXPECT_DOUBLE_EQ(plan->cost_usd_per_h, 2);
}

// AA averages over the models that have accuracies: a busy model without any (here ten
// times the load) does not dilute accuracy's weight against cost.
TEST(ComposedSolverTest, AModelWithoutAccuraciesDoesNotDiluteTheAccuracyTerm) {
  ComposedProblem p;
  p.lambda_rps = {40, 400};
  p.budget_usd_per_h = 10;
  p.headroom = 1;
  p.candidates = {Candidate(0, 0, 0, 70, 40, 1), Candidate(0, 1, 1, 80, 20, 2),
                  Candidate(1, 2, 0, 0, 1000, 1)};
  EXPECT_DOUBLE_EQ(ComposedTotalLoad(p), 40);
  // 10 points of AA (0.10) against $3/h more (0.06): the accurate variant. Averaged over
  // all 440 queries/s the gain would be 0.009 and the cheap one would win.
  p.weights.beta = 0.2;
  auto plan = SolveComposedMilp(p);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->allocations[1].workers, 2);
  EXPECT_EQ(plan->allocations[0].workers, 0);
  p.candidates[0].accuracy = 0;  // no model with accuracies: every model's load
  p.candidates[1].accuracy = 0;
  EXPECT_DOUBLE_EQ(ComposedTotalLoad(p), 440);
}

TEST(ComposedSolverTest, BudgetAndTypeLimitsHold) {
  ComposedProblem p;
  p.lambda_rps = {100};
  p.budget_usd_per_h = 5;
  p.headroom = 1;
  p.candidates = {Candidate(0, 0, 0, 90, 20, 1), Candidate(0, 0, 1, 90, 30, 2)};
  p.max_workers = {3, -1};
  auto plan = SolveComposedMilp(p);
  ASSERT_TRUE(plan.ok());
  ExpectValidPlan(p, *plan);
  EXPECT_LE(plan->allocations[0].workers, 3);
  EXPECT_LE(plan->cost_usd_per_h, 5);
}

// Loading is priced: a candidate that runs now is kept over an equal one that must load.
TEST(ComposedSolverTest, PrefersWhatRunsNow) {
  ComposedProblem p;
  p.lambda_rps = {10};
  p.budget_usd_per_h = 4;
  p.candidates = {Candidate(0, 0, 0, 80, 20, 1, 5, 0), Candidate(0, 0, 1, 80, 20, 1, 5, 1)};
  auto plan = SolveComposedMilp(p);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->allocations[1].workers, 1);
  EXPECT_EQ(plan->load_cost_s, 0);
  p.candidates[1].current = 0;
  plan = SolveComposedMilp(p);
  ASSERT_TRUE(plan.ok());
  EXPECT_DOUBLE_EQ(plan->load_cost_s, 5);
}

// Overload: no plan serves both models; each keeps a worker and the shortfall is spread
// by fraction, not left on one model.
TEST(ComposedSolverTest, OverloadServesWhatTheBudgetCan) {
  ComposedProblem p;
  p.lambda_rps = {100, 10};
  p.budget_usd_per_h = 3;
  p.headroom = 1;
  p.candidates = {Candidate(0, 0, 0, 80, 20, 1), Candidate(1, 1, 0, 80, 5, 1)};
  auto plan = SolveComposedMilp(p);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->overloaded);
  ExpectValidPlan(p, *plan);
  EXPECT_GE(plan->allocations[0].workers, 1);
  EXPECT_GE(plan->allocations[1].workers, 1);
  EXPECT_DOUBLE_EQ(plan->cost_usd_per_h, 3);
  // A second worker for model 1 serves 5 more of its 10 (50%); one more for model 0
  // serves 20 of 100 (20%): the fraction decides.
  EXPECT_EQ(plan->allocations[1].workers, 2);
  auto exact = SolveComposedExhaustive(p);
  ASSERT_TRUE(exact.ok());
  EXPECT_NEAR(plan->objective, exact->objective, 1e-9);
  // A budget below one worker per model: the minimum goes, the plan still serves.
  p.budget_usd_per_h = 1;
  plan = SolveComposedMilp(p);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->workers, 1);
  EXPECT_EQ(plan->allocations[1].workers, 1);  // 50% of model 1 beats 20% of model 0
  // $2/h: one worker each (shortfall 80% + 50%); without the minimum both go to model 1
  // (100% + 0%).
  p.budget_usd_per_h = 2;
  plan = SolveComposedMilp(p);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->allocations[0].workers, 1);
  EXPECT_EQ(plan->allocations[1].workers, 1);
  p.min_one_worker = false;
  plan = SolveComposedMilp(p);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->allocations[0].workers, 0);
  EXPECT_EQ(plan->allocations[1].workers, 2);
}

TEST(ComposedSolverTest, RefusesBadInput) {
  ComposedProblem p;
  p.lambda_rps = {10};
  p.budget_usd_per_h = 1;
  p.candidates = {Candidate(0, 0, 0, 80, 20, 1)};
  EXPECT_TRUE(SolveComposedMilp(p).ok());
  ComposedProblem bad = p;
  bad.budget_usd_per_h = 0;
  EXPECT_FALSE(SolveComposedMilp(bad).ok());
  bad = p;
  bad.candidates[0].capacity_rps = 0;
  EXPECT_FALSE(SolveComposedMilp(bad).ok());
  bad = p;
  bad.candidates[0].model = 1;  // no lambda for it
  EXPECT_FALSE(SolveComposedMilp(bad).ok());
  bad = p;
  bad.weights.shortfall_penalty = 0.5;  // not above alpha
  EXPECT_FALSE(SolveComposedExhaustive(bad).ok());
}

// A pool the size of issue 32's scenario (5 models x 4 variants x 3 types, loads of
// hundreds of rps, a budget of tens of workers): the MILP proves its plan optimal and the
// plan is valid (here in about 0.3 s).
TEST(ComposedSolverTest, SolvesAScenarioSizedInstance) {
  std::mt19937 rng(32);
  std::uniform_real_distribution<double> u(0, 1);
  ComposedProblem p;
  const double price[] = {0.19, 0.5, 1.2};
  VariantId next = 0;
  for (TaskId m = 0; m < 5; ++m) {
    p.lambda_rps.push_back(50 + std::round(u(rng) * 400));
    for (int v = 0; v < 4; ++v, ++next) {
      const double acc = 60 + 8 * v + std::round(u(rng) * 4);
      for (HardwareId h = 0; h < 3; ++h) {
        const double cap = (10 + 20 * h) * (4 - v) * (0.5 + u(rng));
        p.candidates.push_back(Candidate(m, next, h, acc, cap, price[h], 1 + v));
      }
    }
  }
  p.budget_usd_per_h = 30;
  ComposedMilpOptions o;
  o.time_limit_ms = 60'000;
  auto plan = SolveComposedMilp(p, o);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ExpectValidPlan(p, *plan);
  EXPECT_FALSE(plan->overloaded);
  EXPECT_TRUE(plan->optimal);
  EXPECT_GT(plan->workers, 5);
}

}  // namespace
}  // namespace sloserve

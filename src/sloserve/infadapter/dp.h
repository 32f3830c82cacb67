#pragma once
// InfAdapter's Eq. 1 (infadapter/problem.h) solved exactly by a dynamic program over
// the variants in accuracy order: the cross-check of the planner's GLPK MILP
// (infadapter/milp.h; the tests compare both with each other and with the exhaustive
// enumerator), and the planner's solver with the policy option `solver: dp`. 100x faster
// than the MILP in the paper's setting, about 2x slower on 20 variants x 64 cores
// (docs/infadapter.md#performance).
//
// Why a DP is exact. Quotas fill the most accurate variants first, so with the variants
// sorted by accuracy a_1 >= a_2 >= ... and C_j the capacity of the first j (unused
// variants add 0), Abel summation gives
//   sum_m a_m lambda_m = a_M lambda + sum_{j<M} (a_j - a_{j+1}) min(lambda, C_j).
// Every term grows with C_j, so of two partial assignments of the first j variants with
// the same cores, the one with at least the capacity, at least the partial sum and no
// larger load time is never worse: the DP keeps, per number of cores, only the states
// no other state dominates (the load time is a max, handled exactly in the dominance
// test). A state whose capacity reaches lambda is complete: the variants after it get
// no quota (its objective is then known). States that cannot be completed within the
// budget, or whose optimistic bound is below the best complete plan, are dropped.
//
// Same semantics as the MILP, overload included: if lambda exceeds what the budget can
// serve, the target becomes the highest capacity C* (an exact multiple-choice knapsack
// DP over cores) times 1 - 1e-9, and shortfall_rps = lambda - served.
#include "sloserve/core/status.h"
#include "sloserve/infadapter/problem.h"

namespace sloserve {

StatusOr<InfAdapterPlan> SolveInfAdapterDp(const InfAdapterProblem& problem);

// C*: the highest total throughput the budget can buy (the same value as
// InfAdapterMaxCapacity, by a DP over cores).
StatusOr<double> InfAdapterMaxCapacityDp(const InfAdapterProblem& problem);

}  // namespace sloserve

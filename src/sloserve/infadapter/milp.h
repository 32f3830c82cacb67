#pragma once
// InfAdapter's Eq. 1 (infadapter/problem.h) as a mixed-integer linear program, solved
// with GLPK (glpk.h, Debian libglpk-dev; docs/infadapter.md).
//
// Why GLPK: the paper used Gurobi, which is not free. Of the MILP solvers in Debian,
// GLPK is one small C library with a stable C API (no C++ ABI, no chain of COIN-OR
// libraries as CBC brings: Cbc, Cgl, Clp, Osi, CoinUtils) and its branch-and-cut
// solves these models (at most variants x budget binaries, a multiple-choice knapsack
// with a linear quota part) in milliseconds.
//
// Model. For each variant m and each allowed core count k (p_m(k) <= SLO):
//   y_{m,k} in {0,1}        variant m runs with exactly k cores
//   sum_k y_{m,k} <= 1
//   0 <= lambda_m <= sum_k th_m(k) * y_{m,k}
//   sum_m lambda_m = lambda
//   sum_{m,k} k * y_{m,k} <= B
//   L >= load_m * sum_{k not deployed now} y_{m,k}   for each m;  L >= 0
//   maximise  sum_m (alpha * acc_m / lambda) * lambda_m
//             - sum_{m,k} (beta * k / core_scale) * y_{m,k} - (gamma / load_scale) * L
// (LC: a variant kept at a core count it runs with now costs no loading; any other core
// count is a new worker that loads it, as the reference code recreates the container.)
// Since th_m and p_m depend on n_m, one binary per (m, k) keeps the model linear
// (no fit of p_m is needed, a profiled p99 above the SLO just has no column).
//
// Solving. GLPK's simplex solves the LP relaxation; a heuristic (infadapter/incumbent.h)
// rounds its core counts and improves them by local search into a feasible plan; every
// option whose reduced cost shows that a plan using it is worse than that plan is left
// out (reduced-cost fixing: exact), and glp_intopt runs branch and bound on the smaller
// model with the heuristic's plan as its first incumbent. On 20 variants x 64 cores this
// leaves 10-50% of the options and cuts the median and the maximum time about 4x
// (docs/infadapter.md#performance).
//
// Overload. If lambda exceeds what the whole budget can serve (the first solve is
// infeasible), a second MILP finds the highest capacity C* = max sum th_m(k) y_{m,k}
// under the same budget, and Eq. 1 is solved again with lambda' = C* (1 - 1e-9): the
// result is the best plan among the highest-capacity ones, with shortfall_rps =
// lambda - served. (Two solves rather than a penalised slack variable: exact, and no
// big-M to tune against the objective's scale.)
//
// The returned quotas and objective are recomputed from the chosen core counts
// (EvaluateInfAdapterChoice: the quota LP for fixed cores is solved exactly by filling
// the most accurate variants first), so they carry no solver tolerance.
#include "sloserve/core/status.h"
#include "sloserve/infadapter/problem.h"

namespace sloserve {

struct InfAdapterMilpOptions {
  int time_limit_ms = 2000;  // per GLPK solve; past it the best plan found so far
};

StatusOr<InfAdapterPlan> SolveInfAdapterMilp(const InfAdapterProblem& problem,
                                             const InfAdapterMilpOptions& options = {});

// C*: the highest total throughput the budget can buy (a GLPK multiple-choice knapsack).
StatusOr<double> InfAdapterMaxCapacity(const InfAdapterProblem& problem,
                                       const InfAdapterMilpOptions& options = {});

}  // namespace sloserve

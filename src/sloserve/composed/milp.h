#pragma once
// The composed planner's problem (composed/problem.h) as a mixed-integer linear program,
// solved with GLPK (glpk.h; why GLPK: infadapter/milp.h).
//
// Model. For each candidate c, with u_c = ComposedMaxWorkers (enough workers for all
// of its model's load; more only cost):
//   x_c in {0, ..., u_c}      workers of c
//   0 <= lambda_c <= headroom * cap_c * x_c
//   sum_{c of m} lambda_c = lambda_m                    (every model with candidates)
//   sum_c price_c * x_c <= budget;  sum_{c on h} x_c <= max_workers[h]
//   z_c in {0, 1}, x_c - (u_c - current_c) z_c <= current_c,  L >= load_c * z_c
//   maximise sum_c alpha acc_c / (100 Lambda) lambda_c - sum_c beta price_c / budget x_c
//            - gamma / load_scale L
// (z_c = 1 when c gets more workers than it has now: they must load, LC = L.)
// Overload: if no integer plan serves every lambda_m, a second solve with a shortfall
// column s_m per model (sum lambda_c + s_m = lambda_m, cost shortfall_penalty / lambda_m
// per request/s) and at least one worker per model with load (min_one_worker; dropped in
// a third solve when even that does not fit the budget).
//
// The returned quotas and objective are recomputed from the chosen worker counts
// (EvaluateComposedChoice), so they carry no solver tolerance.
#include "sloserve/composed/problem.h"
#include "sloserve/core/status.h"

namespace sloserve {

struct ComposedMilpOptions {
  int time_limit_ms = 2000;  // per GLPK solve; past it the best plan found so far
};

StatusOr<ComposedPlan> SolveComposedMilp(const ComposedProblem& problem,
                                         const ComposedMilpOptions& options = {});

}  // namespace sloserve

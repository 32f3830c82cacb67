#pragma once
// Exhaustive solver of the composed problem (composed/problem.h): every vector of worker
// counts x_c in [0, ComposedMaxWorkers(c)] within the budget and the per-type limits,
// evaluated by EvaluateComposedChoice. The test oracle of the MILP (composed/milp.h),
// exponential in the number of candidates: refuses (ResourceExhausted) past
// `max_assignments`.
//
// Same semantics as the MILP: the best plan that serves every model with candidates; if
// none does, the best by the penalised objective among the plans that give every model
// with load a worker (or among all, if none does).
#include <cstdint>

#include "sloserve/composed/problem.h"
#include "sloserve/core/status.h"

namespace sloserve {

StatusOr<ComposedPlan> SolveComposedExhaustive(const ComposedProblem& problem,
                                               int64_t max_assignments = 10'000'000);

}  // namespace sloserve

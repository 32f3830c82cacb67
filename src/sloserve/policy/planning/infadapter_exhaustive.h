#pragma once
// Exhaustive solver of InfAdapter's Eq. 1 (infadapter_problem.h): every assignment of
// one allowed core count or none to each variant within the budget, quotas filled most
// accurate first. The test oracle of the MILP solver (infadapter_milp.h), exponential
// in the number of variants: refuses (ResourceExhausted) past `max_assignments`.
//
// Same semantics as the MILP solver: if no assignment can serve lambda, the target
// becomes the highest capacity C* (times 1 - 1e-9) and only assignments reaching it
// compete; shortfall_rps = lambda - served.
#include <cstdint>

#include "sloserve/core/status.h"
#include "sloserve/policy/planning/infadapter_problem.h"

namespace sloserve {

StatusOr<InfAdapterPlan> SolveInfAdapterExhaustive(const InfAdapterProblem& problem,
                                                   int64_t max_assignments = 50'000'000);

}  // namespace sloserve

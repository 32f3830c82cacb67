#pragma once
// Exhaustive solver of InfAdapter's Eq. 1 (infadapter/problem.h): every assignment of
// one allowed core count or none to each variant within the budget, quotas filled most
// accurate first. The test oracle of the MILP solver (infadapter/milp.h), exponential
// in the number of variants: refuses (ResourceExhausted) past `max_assignments`.
//
// Same semantics as the MILP solver: if no assignment can serve lambda, the target
// becomes the highest capacity C* (times 1 - 1e-9) and only assignments reaching it
// compete; shortfall_rps = lambda - served.
#include <cstdint>
#include <string>

#include "sloserve/core/status.h"
#include "sloserve/infadapter/problem.h"

namespace sloserve {

// Which assignments compete (docs/infadapter.md, "The reference code's two solvers").
enum class InfAdapterRule {
  // Eq. 1 as the paper states it: every assignment that serves lambda. What the MILP and
  // the DP solve.
  kPaper,
  // The reference implementation's Gurobi model (reconfig.py, run_optimizer): capacities
  // floored to whole rps, and the remaining load lambda - sum of the more accurate
  // variants' capacities is an integer >= 0 at every variant, so all variants but the
  // task's least accurate together serve at most lambda (only it may have spare capacity).
  kReferenceIlp,
  // Its brute-force path (find_all_valid_options): capacities floored, and an option is
  // closed as soon as the variants chosen so far, in ascending accuracy, cover lambda, so
  // without its most accurate variant a plan serves less than lambda.
  kReferenceBruteForce,
};
const char* InfAdapterRuleName(InfAdapterRule rule);  // paper, reference-ilp, ...
StatusOr<InfAdapterRule> ParseInfAdapterRule(const std::string& name);

StatusOr<InfAdapterPlan> SolveInfAdapterExhaustive(const InfAdapterProblem& problem,
                                                   int64_t max_assignments = 50'000'000,
                                                   InfAdapterRule rule = InfAdapterRule::kPaper);

}  // namespace sloserve

#pragma once
// A quick feasible plan for InfAdapter's Eq. 1 (infadapter/problem.h), the incumbent the
// GLPK MILP (infadapter/milp.h) starts from: the root LP's core counts rounded down to an
// allowed core count, then a best-improvement local search that changes one variant's
// core count (or drops / adds a variant) at a time. A heuristic, not a solver: the MILP
// uses its objective to fix columns by reduced cost and to prune, and still proves the
// optimum (docs/infadapter.md#model).
#include <vector>

namespace sloserve {

// The allowed core counts of one variant as the MILP sees them (after its exact
// reductions): parallel vectors, ascending cores.
struct InfAdapterIncumbentVariant {
  double accuracy = 0;  // percent
  double load_time_s = 0;
  std::vector<double> cores, th;  // th capped at the target rate
  std::vector<bool> needs_load;
  double lp_cores = 0;  // sum_k k y_{m,k} in the root LP relaxation
};

struct InfAdapterIncumbentWeights {
  double accuracy = 0;  // alpha / target, per rps of quota times accuracy
  double core = 0;      // beta / core_scale, per core
  double load = 0;      // gamma / load_scale, per second of LC
};

struct InfAdapterIncumbent {
  std::vector<int> pick;       // per variant: index into its cores, or -1 (unused)
  std::vector<double> quotas;  // per variant, summing to the target
  double load_s = 0;           // LC of the plan
  double objective = 0;
};

// Empty pick when the search ends without enough capacity for `target_rps` (the MILP then
// starts without an incumbent).
InfAdapterIncumbent FindInfAdapterIncumbent(const std::vector<InfAdapterIncumbentVariant>& variants,
                                            double target_rps, int budget_cores,
                                            const InfAdapterIncumbentWeights& weights);

}  // namespace sloserve

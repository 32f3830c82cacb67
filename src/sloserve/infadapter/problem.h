#pragma once
// InfAdapter's optimisation (EuroMLSys'23, Eq. 1; docs/infadapter.md): choose per model
// variant m a core count n_m (0 = not used) and a request quota lambda_m to
//   maximise  alpha * AA - (beta * RC / core_scale + gamma * LC / load_scale)
//   s.t.      sum_m lambda_m = lambda,  0 <= lambda_m <= th_m(n_m),  p_m(n_m) <= SLO,
//             RC = sum_m n_m <= B
// with AA = sum_m acc_m * lambda_m / lambda as a FRACTION (the reference implementation's
// units: ResNet152 0.78312), LC = the largest load (readiness)
// time among the variants that must be loaded: used at a core count they are not
// deployed with now (a new worker loads them; create before delete). The weights' defaults are
// the reference code's: accuracy 1 per unit fraction, cores 0.05 per B cores (so the whole
// budget costs 5 accuracy points), loading 0.001 per the largest load time (8.52 s for
// the ResNets). Candidates and plans carry accuracy in percent, as reports and metrics
// show it; InfAdapterAccuracyWeight converts at the objective.
//
// This file holds the problem, the plan, validation, and the evaluation of a core
// assignment shared by the MILP solver (infadapter/milp.h) and the exhaustive oracle
// (infadapter/exhaustive.h). MakeInfAdapterProblem builds a problem from the capacity
// model: what a planning policy calls every plan interval with (forecast lambda,
// loaded set, budget).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/status.h"
#include "sloserve/infadapter/capacity.h"

namespace sloserve {

struct InfAdapterWeights {
  double alpha = 1.0;       // per unit of AA as a fraction (100 percentage points)
  double beta = 0.05;       // per core_scale cores
  double gamma = 0.001;     // per load_scale_s seconds of loading
  double core_scale = 0;    // 0 = the budget B (the reference divides cores by MAX_CPU)
  double load_scale_s = 0;  // 0 = the largest load time among the variants
};

// One allowed core count of a variant: p_m(cores) <= SLO, th_m(cores) = throughput_rps.
struct InfAdapterCoreOption {
  int cores = 0;
  double throughput_rps = 0;
};

struct InfAdapterCandidate {
  std::string name;
  double accuracy = 0;  // percent
  double load_time_s = 0;
  // Core counts it is deployed with now: those options need no loading; any other core
  // count (or a variant not deployed) starts a new worker that loads it.
  std::vector<int> loaded_cores;
  std::vector<InfAdapterCoreOption> options;  // ascending distinct cores; may be empty
};

// Running `c` on `cores` costs its load time in LC.
bool InfAdapterNeedsLoad(const InfAdapterCandidate& c, int cores);

struct InfAdapterProblem {
  std::vector<InfAdapterCandidate> variants;
  double lambda_rps = 0;  // the (forecast) arrival rate to serve
  int budget_cores = 0;   // B
  InfAdapterWeights weights;
};

struct InfAdapterAllocation {
  int cores = 0;            // 0 = variant not used
  double capacity_rps = 0;  // th_m(cores)
  double quota_rps = 0;     // lambda_m
};

struct InfAdapterPlan {
  std::vector<InfAdapterAllocation> allocations;  // parallel to problem.variants
  double objective = 0;
  double average_accuracy = 0;  // AA over the served rate, percent
  int total_cores = 0;          // RC
  double load_cost_s = 0;       // LC
  double capacity_rps = 0;      // sum of th_m(n_m) over the variants used
  double served_rps = 0;        // sum of the quotas
  // lambda - served: > 0 only when lambda exceeds what the budget can serve. Then the
  // plan is, among the highest-capacity plans, the best by the objective with lambda
  // replaced by that capacity (a second solve; see infadapter/milp.h).
  double shortfall_rps = 0;
  bool optimal = true;  // false: the solver stopped at its time limit with a feasible plan
};

// InvalidArgument naming the field: variants (empty), lambda_rps, budget_cores, weights.*,
// variants[i].accuracy / load_time_s / options.
Status ValidateInfAdapterProblem(const InfAdapterProblem& problem);
double InfAdapterCoreScale(const InfAdapterProblem& problem);
// The objective's weight of one percentage point of AA: alpha / 100 (AA enters Eq. 1 as
// a fraction; candidates carry percent).
double InfAdapterAccuracyWeight(const InfAdapterProblem& problem);
double InfAdapterLoadScale(const InfAdapterProblem& problem);

// The plan for a fixed choice: option_index[m] = index into variants[m].options, or -1
// (unused). Quotas fill the most accurate variants first up to their capacity until
// `target_rps` is served (optimal for fixed cores: the objective is linear in the
// quotas); AA and the objective are over `target_rps`. Served < target when the choice
// lacks capacity (shortfall_rps is left 0: callers set it against lambda).
InfAdapterPlan EvaluateInfAdapterChoice(const InfAdapterProblem& problem,
                                        const std::vector<int>& option_index, double target_rps);

// What a planning policy passes each interval.
struct InfAdapterRequest {
  double lambda_rps = 0;
  // Variant -> the core counts it is currently deployed with (no loading cost there).
  std::map<VariantId, std::set<int>> loaded;
  int budget_cores = 0;
  int min_cores = 1;  // smallest core count per used variant (the reference code: 2)
  int max_cores = 0;  // 0 = the budget
  InfAdapterWeights weights;
};

// Candidates = the model's variants; options = core counts k in [min_cores,
// min(max_cores, budget)] with k profiled and p_m(k) <= SLO, th = model.Throughput(k).
StatusOr<InfAdapterProblem> MakeInfAdapterProblem(const InfAdapterCapacityModel& model,
                                                  const InfAdapterRequest& request);

}  // namespace sloserve

#pragma once
// The composed planner's problem (issue 32, docs/composed.md): InfAdapter's Eq. 1
// (EuroMLSys'23; infadapter/problem.h) generalised across models and hardware types.
// A candidate c = (model m, variant v, hardware type h) runs whole workers: x_c >= 0
// workers, each sustaining cap_c requests/s at m's SLO (composed/capacity.h), at
// price_h $/h. Per plan interval, with lambda_m the forecast of model m and
// Lambda = sum_m lambda_m:
//   maximise  alpha * sum_c (acc_c / 100) * lambda_c / Lambda
//             - beta * cost / budget - gamma * LC / load_scale
//   s.t.      sum_{c of m} lambda_c = lambda_m            for every model m
//             0 <= lambda_c <= headroom * cap_c * x_c
//             cost = sum_c price_h(c) * x_c <= budget     ($/h)
//             sum_{c on h} x_c <= max_workers[h]          (where given)
// The accuracy term is Eq. 1's AA with each model weighted by its forecast share
// (lambda_m / Lambda) * sum_c acc_c lambda_c / lambda_m, which simplifies to the line
// above; a model whose variants all have accuracy 0 (unknown) contributes only cost.
// LC = the largest load time of a candidate whose count rises above the workers that
// run it now (a new worker loads it; create before delete).
//
// Overload: when no integer plan serves every lambda_m within the budget, the plan
// serves as much as it can instead of failing. The rows sum_c lambda_c = lambda_m become
// sum_c lambda_c + s_m = lambda_m with a shortfall s_m >= 0 priced at
// shortfall_penalty / lambda_m per request/s: each model's unserved FRACTION costs the
// same, so a small model is not starved for a large one, and every model with load keeps
// at least one worker when the budget allows it. (One penalised solve rather than
// InfAdapter's two solves: with several models "the highest capacity" is not one number;
// the penalty exceeds alpha, so for any worker counts the quotas serve
// min(lambda_m, capacity_m) and the plan is exactly what EvaluateComposedChoice says.)
//
// This file holds the problem, the plan, validation and the evaluation of worker counts
// shared by the MILP (composed/milp.h), the exhaustive oracle (composed/exhaustive.h)
// and the static baseline (composed/baselines.h).
#include <string>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/status.h"

namespace sloserve {

struct ComposedWeights {
  double alpha = 1.0;             // per unit of weighted accuracy as a fraction
  double beta = 0.05;             // per whole budget of $/h
  double gamma = 0.001;           // per load_scale_s seconds of loading
  double load_scale_s = 0;        // 0 = the largest load time among the candidates
  double shortfall_penalty = 10;  // overload only: per unit fraction of a model's load
};

struct ComposedCandidate {
  TaskId model = 0;
  VariantId variant = 0;
  HardwareId hardware = 0;
  std::string name;           // "model/variant@hardware", for reports and errors
  double accuracy = 0;        // percent (0 = unknown)
  double capacity_rps = 0;    // one worker, before the headroom (> 0)
  double price_per_hour = 0;  // $/h of one worker (its hardware type's price)
  double memory_mb = 0;
  double load_time_s = 0;
  int current = 0;  // workers that run it now (no load cost up to this count)
};

struct ComposedProblem {
  std::vector<ComposedCandidate> candidates;
  std::vector<double> lambda_rps;  // per model (TaskId); a model without candidates is unserved
  double budget_usd_per_h = 0;
  double headroom = 0.8;  // fraction of a worker's capacity its quota may use
  // Per hardware type (HardwareId): the most workers of that type; empty or a negative
  // entry = no limit (the budget limits).
  std::vector<int> max_workers;
  // Overload only (when every model is served it holds anyway): each model with load and
  // candidates keeps at least one worker, as long as the budget allows that.
  bool min_one_worker = true;
  ComposedWeights weights;
};

struct ComposedAllocation {
  int workers = 0;
  double capacity_rps = 0;  // headroom * cap * workers
  double quota_rps = 0;     // lambda_c
};

struct ComposedPlan {
  std::vector<ComposedAllocation> allocations;  // parallel to problem.candidates
  std::vector<double> served_rps;               // per model
  std::vector<double> shortfall_rps;            // per model: lambda_m - served
  double objective = 0;
  double average_accuracy = 0;  // percent, over the served requests
  double cost_usd_per_h = 0;
  double load_cost_s = 0;  // LC
  int workers = 0;
  bool overloaded = false;  // the penalised form decided (some lambda_m not servable)
  bool optimal = true;      // false: the solver stopped at its time limit
};

// InvalidArgument naming the field: candidates[i].*, lambda_rps, budget_usd_per_h,
// headroom, weights.*.
Status ValidateComposedProblem(const ComposedProblem& problem);
double ComposedLoadScale(const ComposedProblem& problem);
// The most workers of candidate c any optimal plan uses: enough for all of lambda_m
// (more add cost and serve nothing), within the budget and its type's limit.
int ComposedMaxWorkers(const ComposedProblem& problem, size_t c);
// Σ lambda_m over the models with accuracies (else over all): the denominator of AA.
double ComposedTotalLoad(const ComposedProblem& problem);
// True when `workers` (per candidate) is within the budget and the per-type limits.
bool ComposedWithinLimits(const ComposedProblem& problem, const std::vector<int>& workers);

// The plan for fixed worker counts: per model, quotas fill its most accurate candidates
// first (ties: lower index) up to their capacity until lambda_m is served (optimal for
// fixed counts: the objective is linear in the quotas). `penalised`: the objective
// includes the overload penalty of the shortfall (and `overloaded` is set).
ComposedPlan EvaluateComposedChoice(const ComposedProblem& problem, const std::vector<int>& workers,
                                    bool penalised);

}  // namespace sloserve

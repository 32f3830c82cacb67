#include "sloserve/infadapter/problem.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sloserve {
namespace {

bool FiniteNonNegative(double x) {
  return std::isfinite(x) && x >= 0;
}

}  // namespace

bool InfAdapterNeedsLoad(const InfAdapterCandidate& c, int cores) {
  return c.load_time_s > 0 &&
         std::find(c.loaded_cores.begin(), c.loaded_cores.end(), cores) == c.loaded_cores.end();
}

Status ValidateInfAdapterProblem(const InfAdapterProblem& p) {
  if (p.variants.empty()) return InvalidArgumentError("variants: the variant set is empty");
  if (!FiniteNonNegative(p.lambda_rps)) {
    return InvalidArgumentError("lambda_rps must be finite and >= 0, got " +
                                std::to_string(p.lambda_rps));
  }
  if (p.budget_cores < 0) {
    return InvalidArgumentError("budget_cores must be >= 0, got " + std::to_string(p.budget_cores));
  }
  const InfAdapterWeights& w = p.weights;
  if (!FiniteNonNegative(w.alpha)) return InvalidArgumentError("weights.alpha must be >= 0");
  if (!FiniteNonNegative(w.beta)) return InvalidArgumentError("weights.beta must be >= 0");
  if (!FiniteNonNegative(w.gamma)) return InvalidArgumentError("weights.gamma must be >= 0");
  if (!FiniteNonNegative(w.core_scale)) {
    return InvalidArgumentError("weights.core_scale must be >= 0");
  }
  if (!FiniteNonNegative(w.load_scale_s)) {
    return InvalidArgumentError("weights.load_scale_s must be >= 0");
  }
  for (size_t i = 0; i < p.variants.size(); ++i) {
    const InfAdapterCandidate& c = p.variants[i];
    const std::string field = "variants[" + std::to_string(i) + "] (" + c.name + ").";
    if (!std::isfinite(c.accuracy)) return InvalidArgumentError(field + "accuracy is not finite");
    if (!FiniteNonNegative(c.load_time_s)) {
      return InvalidArgumentError(field + "load_time_s must be >= 0");
    }
    for (size_t j = 0; j < c.options.size(); ++j) {
      const InfAdapterCoreOption& o = c.options[j];
      if (o.cores < 1) return InvalidArgumentError(field + "options: cores must be >= 1");
      if (j > 0 && o.cores <= c.options[j - 1].cores) {
        return InvalidArgumentError(field + "options: cores must be ascending and distinct");
      }
      if (!FiniteNonNegative(o.throughput_rps)) {
        return InvalidArgumentError(field + "options: throughput_rps must be finite and >= 0");
      }
    }
  }
  return OkStatus();
}

double InfAdapterCoreScale(const InfAdapterProblem& p) {
  if (p.weights.core_scale > 0) return p.weights.core_scale;
  return p.budget_cores > 0 ? p.budget_cores : 1.0;
}

double InfAdapterAccuracyWeight(const InfAdapterProblem& p) {
  return p.weights.alpha / 100.0;
}

double InfAdapterLoadScale(const InfAdapterProblem& p) {
  if (p.weights.load_scale_s > 0) return p.weights.load_scale_s;
  double m = 0;
  for (const InfAdapterCandidate& c : p.variants) m = std::max(m, c.load_time_s);
  return m > 0 ? m : 1.0;
}

InfAdapterPlan EvaluateInfAdapterChoice(const InfAdapterProblem& p,
                                        const std::vector<int>& option_index, double target_rps) {
  InfAdapterPlan plan;
  plan.allocations.resize(p.variants.size());
  for (size_t m = 0; m < p.variants.size(); ++m) {
    if (option_index[m] < 0) continue;
    const InfAdapterCandidate& c = p.variants[m];
    const InfAdapterCoreOption& o = c.options[option_index[m]];
    plan.allocations[m].cores = o.cores;
    plan.allocations[m].capacity_rps = o.throughput_rps;
    plan.total_cores += o.cores;
    plan.capacity_rps += o.throughput_rps;
    if (InfAdapterNeedsLoad(c, o.cores))
      plan.load_cost_s = std::max(plan.load_cost_s, c.load_time_s);
  }
  // Most accurate first (ties: lower index), each up to its capacity.
  std::vector<size_t> order(p.variants.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return p.variants[a].accuracy > p.variants[b].accuracy;
  });
  double left = std::max(0.0, target_rps);
  double acc_sum = 0;
  for (size_t m : order) {
    InfAdapterAllocation& a = plan.allocations[m];
    if (a.cores == 0 || left <= 0) continue;
    a.quota_rps = std::min(a.capacity_rps, left);
    left -= a.quota_rps;
    plan.served_rps += a.quota_rps;
    acc_sum += p.variants[m].accuracy * a.quota_rps;
  }
  const double aa_over_target = target_rps > 0 ? acc_sum / target_rps : 0;
  plan.average_accuracy = plan.served_rps > 0 ? acc_sum / plan.served_rps : 0;
  const InfAdapterWeights& w = p.weights;
  plan.objective = InfAdapterAccuracyWeight(p) * aa_over_target -
                   w.beta * plan.total_cores / InfAdapterCoreScale(p) -
                   w.gamma * plan.load_cost_s / InfAdapterLoadScale(p);
  return plan;
}

StatusOr<InfAdapterProblem> MakeInfAdapterProblem(const InfAdapterCapacityModel& model,
                                                  const InfAdapterRequest& r) {
  if (model.variants.empty()) return InvalidArgumentError("variants: the variant set is empty");
  if (!(model.headroom > 0 && model.headroom <= 1)) {
    return InvalidArgumentError("headroom must be in (0, 1], got " +
                                std::to_string(model.headroom));
  }
  if (r.min_cores < 1) return InvalidArgumentError("min_cores must be >= 1");
  if (r.max_cores < 0) return InvalidArgumentError("max_cores must be >= 0 (0 = the budget)");
  InfAdapterProblem p;
  p.lambda_rps = r.lambda_rps;
  p.budget_cores = r.budget_cores;
  p.weights = r.weights;
  const int hi = std::min(r.max_cores > 0 ? r.max_cores : r.budget_cores, r.budget_cores);
  for (const InfAdapterVariantCapacity& v : model.variants) {
    InfAdapterCandidate c;
    c.name = v.name;
    c.accuracy = v.accuracy;
    c.load_time_s = ToSeconds(v.load_time);
    if (auto it = r.loaded.find(v.variant); it != r.loaded.end()) {
      c.loaded_cores.assign(it->second.begin(), it->second.end());
    }
    for (int k = r.min_cores; k <= hi; ++k) {
      if (v.Feasible(k, model.slo)) c.options.push_back({k, v.Throughput(k)});
    }
    p.variants.push_back(std::move(c));
  }
  RETURN_IF_ERROR(ValidateInfAdapterProblem(p));
  return p;
}

}  // namespace sloserve

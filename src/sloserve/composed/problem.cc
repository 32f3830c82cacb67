#include "sloserve/composed/problem.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace sloserve {
namespace {

bool FiniteNonNegative(double x) {
  return std::isfinite(x) && x >= 0;
}

}  // namespace

Status ValidateComposedProblem(const ComposedProblem& p) {
  for (size_t m = 0; m < p.lambda_rps.size(); ++m) {
    if (!FiniteNonNegative(p.lambda_rps[m])) {
      return InvalidArgumentError("lambda_rps[" + std::to_string(m) + "] must be finite and >= 0");
    }
  }
  if (!(std::isfinite(p.budget_usd_per_h) && p.budget_usd_per_h > 0)) {
    return InvalidArgumentError("budget_usd_per_h must be > 0");
  }
  if (!(p.headroom > 0 && p.headroom <= 1)) {
    return InvalidArgumentError("headroom must be in (0, 1]");
  }
  const ComposedWeights& w = p.weights;
  if (!FiniteNonNegative(w.alpha)) return InvalidArgumentError("weights.alpha must be >= 0");
  if (!FiniteNonNegative(w.beta)) return InvalidArgumentError("weights.beta must be >= 0");
  if (!FiniteNonNegative(w.gamma)) return InvalidArgumentError("weights.gamma must be >= 0");
  if (!FiniteNonNegative(w.load_scale_s)) {
    return InvalidArgumentError("weights.load_scale_s must be >= 0");
  }
  // Above alpha, a request/s of shortfall always costs more than it could add to the
  // accuracy term, so the quotas of fixed counts serve all they can (see the header).
  if (!(std::isfinite(w.shortfall_penalty) && w.shortfall_penalty > w.alpha)) {
    return InvalidArgumentError("weights.shortfall_penalty must be > weights.alpha");
  }
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    const ComposedCandidate& c = p.candidates[i];
    const std::string field = "candidates[" + std::to_string(i) + "] (" + c.name + ").";
    if (c.model >= p.lambda_rps.size()) return InvalidArgumentError(field + "model has no lambda");
    if (!(std::isfinite(c.accuracy) && c.accuracy >= 0 && c.accuracy <= 100)) {
      return InvalidArgumentError(field + "accuracy must be in [0, 100]");
    }
    if (!(std::isfinite(c.capacity_rps) && c.capacity_rps > 0)) {
      return InvalidArgumentError(field + "capacity_rps must be > 0");
    }
    if (!FiniteNonNegative(c.price_per_hour)) {
      return InvalidArgumentError(field + "price_per_hour must be >= 0");
    }
    if (!FiniteNonNegative(c.load_time_s)) {
      return InvalidArgumentError(field + "load_time_s must be >= 0");
    }
    if (c.current < 0) return InvalidArgumentError(field + "current must be >= 0");
  }
  return OkStatus();
}

double ComposedLoadScale(const ComposedProblem& p) {
  if (p.weights.load_scale_s > 0) return p.weights.load_scale_s;
  double m = 0;
  for (const ComposedCandidate& c : p.candidates) m = std::max(m, c.load_time_s);
  return m > 0 ? m : 1.0;
}

double ComposedTotalLoad(const ComposedProblem& p) {
  // AA averages over the queries of the models that have accuracies: a model whose
  // profile records none (0) would otherwise dilute it, and with it the weight accuracy
  // has against cost (recommendation traffic outnumbers image queries 7 to 1 in the
  // composed scenario). No model with accuracies: every model's load (AA is 0 anyway).
  std::vector<bool> scored(p.lambda_rps.size(), false);
  for (const ComposedCandidate& c : p.candidates) {
    if (c.model < scored.size() && c.accuracy > 0) scored[c.model] = true;
  }
  double all = 0, with_accuracy = 0;
  for (size_t m = 0; m < p.lambda_rps.size(); ++m) {
    all += p.lambda_rps[m];
    if (scored[m]) with_accuracy += p.lambda_rps[m];
  }
  return with_accuracy > 0 ? with_accuracy : all;
}

int ComposedMaxWorkers(const ComposedProblem& p, size_t i) {
  const ComposedCandidate& c = p.candidates[i];
  const double need = p.lambda_rps[c.model] / (p.headroom * c.capacity_rps);
  double n = std::ceil(need - 1e-9);
  if (c.price_per_hour > 0) n = std::min(n, std::floor(p.budget_usd_per_h / c.price_per_hour));
  if (c.hardware < p.max_workers.size() && p.max_workers[c.hardware] >= 0) {
    n = std::min(n, static_cast<double>(p.max_workers[c.hardware]));
  }
  return static_cast<int>(std::max(0.0, std::min(n, 1e6)));
}

bool ComposedWithinLimits(const ComposedProblem& p, const std::vector<int>& workers) {
  double cost = 0;
  std::vector<int> per_type(p.max_workers.size(), 0);
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    cost += p.candidates[i].price_per_hour * workers[i];
    if (p.candidates[i].hardware < per_type.size())
      per_type[p.candidates[i].hardware] += workers[i];
  }
  if (cost > p.budget_usd_per_h * (1 + 1e-12)) return false;
  for (size_t h = 0; h < per_type.size(); ++h) {
    if (p.max_workers[h] >= 0 && per_type[h] > p.max_workers[h]) return false;
  }
  return true;
}

ComposedPlan EvaluateComposedChoice(const ComposedProblem& p, const std::vector<int>& workers,
                                    bool penalised) {
  ComposedPlan plan;
  const size_t models = p.lambda_rps.size();
  plan.allocations.resize(p.candidates.size());
  plan.served_rps.assign(models, 0);
  plan.shortfall_rps.assign(models, 0);
  plan.overloaded = penalised;
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    const ComposedCandidate& c = p.candidates[i];
    ComposedAllocation& a = plan.allocations[i];
    a.workers = workers[i];
    a.capacity_rps = p.headroom * c.capacity_rps * workers[i];
    plan.workers += workers[i];
    plan.cost_usd_per_h += c.price_per_hour * workers[i];
    if (workers[i] > c.current && c.load_time_s > 0) {
      plan.load_cost_s = std::max(plan.load_cost_s, c.load_time_s);
    }
  }
  // Most accurate first (ties: lower index), each up to its capacity, per model.
  std::vector<size_t> order(p.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return p.candidates[a].accuracy > p.candidates[b].accuracy;
  });
  std::vector<double> left = p.lambda_rps;
  double acc_sum = 0, served = 0;
  for (size_t i : order) {
    ComposedAllocation& a = plan.allocations[i];
    const TaskId m = p.candidates[i].model;
    if (a.workers == 0 || left[m] <= 0) continue;
    a.quota_rps = std::min(a.capacity_rps, left[m]);
    left[m] -= a.quota_rps;
    plan.served_rps[m] += a.quota_rps;
    served += a.quota_rps;
    acc_sum += p.candidates[i].accuracy * a.quota_rps;
  }
  double shortfall_fraction = 0;
  for (size_t m = 0; m < models; ++m) {
    const double s = p.lambda_rps[m] - plan.served_rps[m];
    plan.shortfall_rps[m] = s > 1e-9 * std::max(1.0, p.lambda_rps[m]) ? s : 0;
    if (p.lambda_rps[m] > 0) shortfall_fraction += plan.shortfall_rps[m] / p.lambda_rps[m];
  }
  const double total = ComposedTotalLoad(p);
  plan.average_accuracy = served > 0 ? acc_sum / served : 0;
  const ComposedWeights& w = p.weights;
  plan.objective = (total > 0 ? w.alpha / 100.0 * acc_sum / total : 0) -
                   w.beta * plan.cost_usd_per_h / p.budget_usd_per_h -
                   w.gamma * plan.load_cost_s / ComposedLoadScale(p);
  if (penalised) plan.objective -= w.shortfall_penalty * shortfall_fraction;
  return plan;
}

}  // namespace sloserve

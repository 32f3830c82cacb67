#include "sloserve/composed/baselines.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace sloserve {
namespace {

template <typename Id>
bool Allows(const std::vector<Id>& fixed, TaskId m, Id id) {
  return m >= fixed.size() || fixed[m] == static_cast<Id>(kNoId) || fixed[m] == id;
}

}  // namespace

ComposedProblem RestrictComposedProblem(const ComposedProblem& problem,
                                        const ComposedRestrictions& r) {
  ComposedProblem out = problem;
  std::erase_if(out.candidates, [&](const ComposedCandidate& c) {
    return !Allows(r.fixed_variant, c.model, c.variant) ||
           !Allows(r.fixed_hardware, c.model, c.hardware);
  });
  return out;
}

VariantId DefaultFixedVariant(const ComposedProblem& p, TaskId m) {
  VariantId best = kNoId;
  double best_accuracy = -1;
  for (const ComposedCandidate& c : p.candidates) {
    if (c.model != m) continue;
    if (c.accuracy > best_accuracy || (c.accuracy == best_accuracy && c.variant < best)) {
      best = c.variant;
      best_accuracy = c.accuracy;
    }
  }
  return best;
}

HardwareId DefaultFixedHardware(const ComposedProblem& p, TaskId m, VariantId v) {
  HardwareId best = kNoId;
  bool best_free = false;
  double best_value = -1;  // capacity per $/h, or capacity when free
  for (const ComposedCandidate& c : p.candidates) {
    if (c.model != m || c.variant != v) continue;
    const bool free = c.price_per_hour <= 0;
    const double value = free ? c.capacity_rps : c.capacity_rps / c.price_per_hour;
    const bool better =
        (free && !best_free) ||
        (free == best_free && (value > best_value || (value == best_value && c.hardware < best)));
    if (best == kNoId || better) {
      best = c.hardware;
      best_free = free;
      best_value = value;
    }
  }
  return best;
}

StatusOr<ComposedPlan> ComposedStaticPlan(const ComposedProblem& p) {
  RETURN_IF_ERROR(ValidateComposedProblem(p));
  std::vector<int> candidate_of(p.lambda_rps.size(), -1);
  int models = 0;
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    int& slot = candidate_of[p.candidates[i].model];
    if (slot >= 0) {
      return FailedPreconditionError(
          "static sizing: model " + std::to_string(p.candidates[i].model) +
          " has more than one candidate (" + p.candidates[slot].name + ", " + p.candidates[i].name +
          "); fix its variant and hardware");
    }
    slot = static_cast<int>(i);
    ++models;
  }
  std::vector<int> workers(p.candidates.size(), 0);
  const double share = models > 0 ? p.budget_usd_per_h / models : 0;
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    const ComposedCandidate& c = p.candidates[i];
    const double n = c.price_per_hour > 0
                         ? std::floor(share / c.price_per_hour + 1e-9)
                         : std::ceil(p.lambda_rps[c.model] / (p.headroom * c.capacity_rps) - 1e-9);
    // Within the type's limit (max_workers), like the planned sizing.
    const double cap = c.hardware < p.max_workers.size() && p.max_workers[c.hardware] >= 0
                           ? p.max_workers[c.hardware]
                           : 1e6;
    workers[i] = std::max(1, static_cast<int>(std::min(n, cap)));
  }
  ComposedPlan plan = EvaluateComposedChoice(p, workers, false);
  bool short_of_load = false;
  for (size_t m = 0; m < candidate_of.size(); ++m) {
    short_of_load = short_of_load || (candidate_of[m] >= 0 && plan.shortfall_rps[m] > 0);
  }
  if (short_of_load) plan = EvaluateComposedChoice(p, workers, true);
  return plan;
}

}  // namespace sloserve

#include "sloserve/composed/exhaustive.h"

#include <functional>
#include <string>
#include <vector>

namespace sloserve {
namespace {

// Which plans compete, in the order the MILP tries its forms.
enum class Tier { kServesAll = 0, kOneWorkerEach = 1, kAny = 2 };

Tier TierOf(const ComposedProblem& p, const std::vector<int>& workers) {
  const size_t models = p.lambda_rps.size();
  std::vector<bool> has(models, false);
  std::vector<int> count(models, 0);
  std::vector<double> capacity(models, 0);
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    const ComposedCandidate& c = p.candidates[i];
    has[c.model] = true;
    count[c.model] += workers[i];
    capacity[c.model] += p.headroom * c.capacity_rps * workers[i];
  }
  bool serves_all = true, one_each = true;
  for (size_t m = 0; m < models; ++m) {
    if (!has[m] || p.lambda_rps[m] <= 0) continue;
    serves_all = serves_all && capacity[m] >= p.lambda_rps[m] * (1 - 1e-9);
    one_each = one_each && count[m] >= 1;
  }
  if (serves_all) return Tier::kServesAll;
  return one_each && p.min_one_worker ? Tier::kOneWorkerEach : Tier::kAny;
}

}  // namespace

StatusOr<ComposedPlan> SolveComposedExhaustive(const ComposedProblem& p, int64_t max_assignments) {
  RETURN_IF_ERROR(ValidateComposedProblem(p));
  const size_t n = p.candidates.size();
  std::vector<int> upper(n);
  for (size_t i = 0; i < n; ++i) upper[i] = ComposedMaxWorkers(p, i);
  std::vector<int> workers(n, 0);
  int64_t visited = 0;
  bool too_many = false;
  bool have = false;
  Tier best_tier = Tier::kAny;
  ComposedPlan best;
  std::function<void(size_t)> rec = [&](size_t i) {
    if (too_many) return;
    if (i == n) {
      if (++visited > max_assignments) {
        too_many = true;
        return;
      }
      if (!ComposedWithinLimits(p, workers)) return;
      const Tier tier = TierOf(p, workers);
      if (have && tier > best_tier) return;
      ComposedPlan plan = EvaluateComposedChoice(p, workers, tier != Tier::kServesAll);
      if (!have || tier < best_tier || plan.objective > best.objective) {
        best = std::move(plan);
        best_tier = tier;
        have = true;
      }
      return;
    }
    for (int k = 0; k <= upper[i]; ++k) {
      workers[i] = k;
      rec(i + 1);
    }
    workers[i] = 0;
  };
  rec(0);
  if (too_many) {
    return ResourceExhaustedError("exhaustive composed search exceeds " +
                                  std::to_string(max_assignments) + " assignments");
  }
  return best;  // the all-zero vector is always within the limits
}

}  // namespace sloserve

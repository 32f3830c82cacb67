#include "sloserve/policy/planning/infadapter_exhaustive.h"

#include <functional>

namespace sloserve {

StatusOr<InfAdapterPlan> SolveInfAdapterExhaustive(const InfAdapterProblem& p,
                                                   int64_t max_assignments) {
  RETURN_IF_ERROR(ValidateInfAdapterProblem(p));
  const size_t n = p.variants.size();
  std::vector<int> pick(n, -1);
  int64_t visited = 0;
  bool too_many = false;
  // Calls leaf(pick, capacity) for every assignment within the budget.
  auto enumerate = [&](const std::function<void(double)>& leaf) {
    std::function<void(size_t, int, double)> rec = [&](size_t m, int left, double cap) {
      if (too_many) return;
      if (m == n) {
        if (++visited > max_assignments) {
          too_many = true;
          return;
        }
        leaf(cap);
        return;
      }
      pick[m] = -1;
      rec(m + 1, left, cap);
      const auto& opts = p.variants[m].options;
      for (size_t j = 0; j < opts.size() && opts[j].cores <= left; ++j) {
        pick[m] = static_cast<int>(j);
        rec(m + 1, left - opts[j].cores, cap + opts[j].throughput_rps);
      }
      pick[m] = -1;
    };
    rec(0, p.budget_cores, 0);
  };
  double max_cap = 0;
  enumerate([&](double cap) { max_cap = std::max(max_cap, cap); });
  if (too_many) {
    return ResourceExhaustedError("exhaustive InfAdapter search exceeds " +
                                  std::to_string(max_assignments) + " assignments");
  }
  const bool servable = max_cap >= p.lambda_rps;
  const double target = servable ? p.lambda_rps : max_cap * (1 - 1e-9);
  bool have = false;
  InfAdapterPlan best;
  enumerate([&](double cap) {
    if (cap < target) return;
    InfAdapterPlan plan = EvaluateInfAdapterChoice(p, pick, target);
    if (!have || plan.objective > best.objective) {
      best = std::move(plan);
      have = true;
    }
  });
  if (!have) {  // lambda == 0 with nothing allowed, or a zero-capacity budget
    best = EvaluateInfAdapterChoice(p, std::vector<int>(n, -1), target);
  }
  best.shortfall_rps = std::max(0.0, p.lambda_rps - best.served_rps);
  return best;
}

}  // namespace sloserve

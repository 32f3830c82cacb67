#include "sloserve/infadapter/exhaustive.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace sloserve {
namespace {

// The reference rules' extra constraint on an assignment (capacities already floored).
bool ReferenceAllows(const InfAdapterProblem& p, InfAdapterRule rule, const std::vector<int>& pick,
                     const std::vector<size_t>& by_accuracy) {
  auto capacity = [&](size_t m) {
    return pick[m] < 0 ? 0.0 : p.variants[m].options[pick[m]].throughput_rps;
  };
  double all_but = 0;
  if (rule == InfAdapterRule::kReferenceIlp) {
    for (size_t i = 1; i < by_accuracy.size(); ++i) all_but += capacity(by_accuracy[i]);
    return all_but <= p.lambda_rps;
  }
  // kReferenceBruteForce: drop the most accurate variant used.
  size_t top = by_accuracy.size();
  for (size_t i = 0; i < by_accuracy.size(); ++i)
    if (pick[by_accuracy[i]] >= 0) top = i;
  for (size_t i = 0; i < top; ++i) all_but += capacity(by_accuracy[i]);
  return top == by_accuracy.size() || all_but < p.lambda_rps;
}

}  // namespace

const char* InfAdapterRuleName(InfAdapterRule rule) {
  switch (rule) {
    case InfAdapterRule::kPaper:
      return "paper";
    case InfAdapterRule::kReferenceIlp:
      return "reference-ilp";
    case InfAdapterRule::kReferenceBruteForce:
      return "reference-brute-force";
  }
  return "?";
}

StatusOr<InfAdapterRule> ParseInfAdapterRule(const std::string& name) {
  for (InfAdapterRule r : {InfAdapterRule::kPaper, InfAdapterRule::kReferenceIlp,
                           InfAdapterRule::kReferenceBruteForce}) {
    if (name == InfAdapterRuleName(r)) return r;
  }
  return InvalidArgumentError("unknown rule '" + name +
                              "' (paper, reference-ilp, reference-brute-force)");
}

StatusOr<InfAdapterPlan> SolveInfAdapterExhaustive(const InfAdapterProblem& problem,
                                                   int64_t max_assignments, InfAdapterRule rule) {
  RETURN_IF_ERROR(ValidateInfAdapterProblem(problem));
  InfAdapterProblem p = problem;
  // Ascending accuracy (ties: lower index first), the reference's order of variants.
  std::vector<size_t> by_accuracy(p.variants.size());
  std::iota(by_accuracy.begin(), by_accuracy.end(), 0);
  if (rule != InfAdapterRule::kPaper) {
    for (InfAdapterCandidate& c : p.variants)  // the reference's capacities are whole rps
      for (InfAdapterCoreOption& o : c.options) o.throughput_rps = std::floor(o.throughput_rps);
    std::stable_sort(by_accuracy.begin(), by_accuracy.end(), [&](size_t a, size_t b) {
      return p.variants[a].accuracy < p.variants[b].accuracy;
    });
  }
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
  auto allowed = [&] {
    return rule == InfAdapterRule::kPaper || ReferenceAllows(p, rule, pick, by_accuracy);
  };
  enumerate([&](double cap) {
    if (allowed()) max_cap = std::max(max_cap, cap);
  });
  if (too_many) {
    return ResourceExhaustedError("exhaustive InfAdapter search exceeds " +
                                  std::to_string(max_assignments) + " assignments");
  }
  const bool servable = max_cap >= p.lambda_rps;
  const double target = servable ? p.lambda_rps : max_cap * (1 - 1e-9);
  bool have = false;
  InfAdapterPlan best;
  enumerate([&](double cap) {
    if (cap < target || !allowed()) return;
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

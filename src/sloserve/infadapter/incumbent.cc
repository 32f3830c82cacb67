#include "sloserve/infadapter/incumbent.h"

#include <algorithm>
#include <numeric>

namespace sloserve {
namespace {

// Evaluates core choices the way EvaluateInfAdapterChoice does (quotas fill the most
// accurate variants first), without allocating: the local search calls it thousands of
// times per solve.
class IncumbentEvaluator {
 public:
  IncumbentEvaluator(const std::vector<InfAdapterIncumbentVariant>& v, double target,
                     const InfAdapterIncumbentWeights& w)
      : v_(v), target_(target), w_(w), order_(v.size()) {
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](size_t a, size_t b) { return v[a].accuracy > v[b].accuracy; });
  }

  int Cores(const std::vector<int>& pick) const {
    double cores = 0;
    for (size_t m = 0; m < v_.size(); ++m) {
      if (pick[m] >= 0) cores += v_[m].cores[pick[m]];
    }
    return static_cast<int>(cores);
  }

  // Objective over the target (unserved rate adds no accuracy); `served` gets the quota sum.
  double Objective(const std::vector<int>& pick, double* served) const {
    double left = target_, acc = 0, cores = 0, load = 0;
    for (size_t m : order_) {
      const int j = pick[m];
      if (j < 0) continue;
      const InfAdapterIncumbentVariant& c = v_[m];
      cores += c.cores[j];
      if (c.needs_load[j]) load = std::max(load, c.load_time_s);
      const double q = std::min(c.th[j], std::max(0.0, left));
      left -= q;
      acc += c.accuracy * q;
    }
    if (served != nullptr) *served = target_ - std::max(0.0, left);
    return w_.accuracy * acc - w_.core * cores - w_.load * load;
  }

  InfAdapterIncumbent Plan(const std::vector<int>& pick) const {
    InfAdapterIncumbent r;
    r.pick = pick;
    r.quotas.assign(v_.size(), 0);
    double left = target_;
    for (size_t m : order_) {
      const int j = pick[m];
      if (j < 0) continue;
      if (v_[m].needs_load[j]) r.load_s = std::max(r.load_s, v_[m].load_time_s);
      r.quotas[m] = std::min(v_[m].th[j], std::max(0.0, left));
      left -= r.quotas[m];
    }
    r.objective = Objective(pick, nullptr);
    return r;
  }

 private:
  const std::vector<InfAdapterIncumbentVariant>& v_;
  double target_;
  InfAdapterIncumbentWeights w_;
  std::vector<size_t> order_;
};

// The largest allowed core count of `c` not above `cores`, or -1.
int LargestWithin(const InfAdapterIncumbentVariant& c, double cores) {
  int j = -1;
  for (size_t i = 0; i < c.cores.size() && c.cores[i] <= cores + 1e-9; ++i) j = static_cast<int>(i);
  return j;
}

// How good a choice is: serving the whole target comes first (the rounded LP plan may
// lack a little capacity), then the objective.
struct IncumbentScore {
  double unserved = 0;
  double objective = 0;
  bool operator>(const IncumbentScore& o) const {
    if (unserved < o.unserved - 1e-9) return true;
    if (unserved > o.unserved + 1e-9) return false;
    return objective > o.objective + 1e-12;
  }
};

IncumbentScore ScoreOf(const IncumbentEvaluator& eval, double target,
                       const std::vector<int>& pick) {
  double served = 0;
  const double objective = eval.Objective(pick, &served);
  return {std::max(0.0, target - served), objective};
}

// One best-improvement step over single-variant changes, then (if none improves) over
// pairs where one variant changes and another takes the most cores that are left. True
// if `pick` improved.
bool ImproveOnce(const std::vector<InfAdapterIncumbentVariant>& v, double target, int budget,
                 const IncumbentEvaluator& eval, std::vector<int>& pick, IncumbentScore& score) {
  const size_t n = v.size();
  const int used = eval.Cores(pick);
  std::vector<int> best = pick, trial = pick;
  IncumbentScore best_score = score;
  bool improved = false;
  auto consider = [&]() {
    const IncumbentScore s = ScoreOf(eval, target, trial);
    if (s > best_score) {
      best_score = s;
      best = trial;
      improved = true;
    }
  };
  for (size_t m = 0; m < n; ++m) {
    const double base = used - (pick[m] >= 0 ? v[m].cores[pick[m]] : 0);
    for (int j = -1; j < static_cast<int>(v[m].cores.size()); ++j) {
      if (j == pick[m] || (j >= 0 && base + v[m].cores[j] > budget)) continue;
      trial[m] = j;
      consider();
    }
    trial[m] = pick[m];
  }
  if (!improved) {
    for (size_t m = 0; m < n; ++m) {
      const double base_m = used - (pick[m] >= 0 ? v[m].cores[pick[m]] : 0);
      for (int j = -1; j < static_cast<int>(v[m].cores.size()); ++j) {
        if (j == pick[m] || (j >= 0 && base_m + v[m].cores[j] > budget)) continue;
        trial[m] = j;
        const double after_m = base_m + (j >= 0 ? v[m].cores[j] : 0);
        for (size_t k = 0; k < n; ++k) {
          if (k == m) continue;
          const double free = budget - after_m + (pick[k] >= 0 ? v[k].cores[pick[k]] : 0);
          const int jk = LargestWithin(v[k], free);
          if (jk == pick[k]) continue;
          trial[k] = jk;
          consider();
          trial[k] = pick[k];
        }
      }
      trial[m] = pick[m];
    }
  }
  if (!improved) return false;
  pick = best;
  score = best_score;
  return true;
}

}  // namespace

InfAdapterIncumbent FindInfAdapterIncumbent(const std::vector<InfAdapterIncumbentVariant>& v,
                                            double target_rps, int budget_cores,
                                            const InfAdapterIncumbentWeights& weights) {
  const IncumbentEvaluator eval(v, target_rps, weights);
  // Round the LP's core counts down: within the budget since the LP's are.
  std::vector<int> pick(v.size(), -1);
  for (size_t m = 0; m < v.size(); ++m) pick[m] = LargestWithin(v[m], v[m].lp_cores);
  IncumbentScore score = ScoreOf(eval, target_rps, pick);
  // Each step improves the score; the cap only bounds the time on odd instances.
  for (int step = 0; step < 200 && ImproveOnce(v, target_rps, budget_cores, eval, pick, score);
       ++step) {
  }
  if (score.unserved > 0) return {};
  return eval.Plan(pick);
}

}  // namespace sloserve

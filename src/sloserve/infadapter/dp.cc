#include "sloserve/infadapter/dp.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

namespace sloserve {
namespace {

// One kept core count of a variant (the same exact reductions as the MILP's columns:
// throughput capped at the target; an option that must be loaded and has no more capped
// throughput than one with fewer cores is never better).
struct DpOption {
  int option = 0;  // index into variants[m].options
  int cores = 0;
  double th = 0;  // capped
  int level = 0;  // index into DpProblem::load_times; 0 = no loading
};

struct DpVariant {
  size_t m = 0;
  double accuracy = 0;
  std::vector<DpOption> options;
};

struct DpProblem {
  std::vector<DpVariant> order;                       // variants with options, most accurate first
  std::vector<double> load_times;                     // ascending distinct; [0] = 0
  double acc_coef = 0, core_coef = 0, load_coef = 0;  // objective per rps*percent, core, s
  // suffix_cap[j][k]: the highest capped capacity of order[j..] within k cores.
  std::vector<std::vector<double>> suffix_cap;
  // gain[t][j][k]: with mu = order[t].accuracy, the most that order[j..] (j > t) can add
  // within k cores to acc_coef * sum (a_i - mu) * lambda_i - core_coef * cores, each
  // lambda_i up to its capacity. For any mu, acc_coef * mu * R + gain bounds what serving
  // a remaining rate R can add (a Lagrangian relaxation of sum lambda_i = R; about as
  // tight as the MILP's LP relaxation).
  std::vector<std::vector<std::vector<double>>> gain;
};

DpProblem Prepare(const InfAdapterProblem& p, double target) {
  DpProblem d;
  const InfAdapterWeights& w = p.weights;
  d.acc_coef = InfAdapterAccuracyWeight(p) / target;
  d.core_coef = w.beta / InfAdapterCoreScale(p);
  d.load_coef = w.gamma / InfAdapterLoadScale(p);
  std::vector<size_t> idx(p.variants.size());
  std::iota(idx.begin(), idx.end(), 0);
  // Ties keep the lower index first, as EvaluateInfAdapterChoice fills them.
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return p.variants[a].accuracy > p.variants[b].accuracy;
  });
  d.load_times.push_back(0);
  for (size_t m : idx) {
    const InfAdapterCandidate& c = p.variants[m];
    DpVariant v;
    v.m = m;
    v.accuracy = c.accuracy;
    double best = 0;
    for (size_t j = 0; j < c.options.size(); ++j) {
      const InfAdapterCoreOption& o = c.options[j];
      if (o.cores > p.budget_cores) break;
      const double th = std::min(o.throughput_rps, target);
      const bool needs_load = InfAdapterNeedsLoad(c, o.cores);
      if (th <= best && (needs_load || th <= 0)) continue;
      best = std::max(best, th);
      v.options.push_back({static_cast<int>(j), o.cores, th, needs_load ? -1 : 0});
      if (needs_load) d.load_times.push_back(c.load_time_s);
    }
    if (!v.options.empty()) d.order.push_back(std::move(v));
  }
  std::sort(d.load_times.begin(), d.load_times.end());
  d.load_times.erase(std::unique(d.load_times.begin(), d.load_times.end()), d.load_times.end());
  for (DpVariant& v : d.order) {
    const double t = p.variants[v.m].load_time_s;
    const int level = static_cast<int>(
        std::lower_bound(d.load_times.begin(), d.load_times.end(), t) - d.load_times.begin());
    for (DpOption& o : v.options) {
      if (o.level < 0) o.level = level;
    }
  }
  const size_t n = d.order.size();
  const int budget = p.budget_cores;
  // A multiple-choice knapsack over the suffixes: table[j][k] = the best of order[j..]
  // within k cores, each variant adding item(variant, option) or nothing.
  auto suffix_table = [&](auto item) {
    std::vector<std::vector<double>> table(n + 1, std::vector<double>(budget + 1, 0.0));
    for (size_t j = n; j-- > 0;) {
      for (int k = 0; k <= budget; ++k) {
        double best = table[j + 1][k];
        for (const DpOption& o : d.order[j].options) {
          if (o.cores > k) break;
          best = std::max(best, table[j + 1][k - o.cores] + item(d.order[j], o));
        }
        table[j][k] = best;
      }
    }
    return table;
  };
  d.suffix_cap = suffix_table([](const DpVariant&, const DpOption& o) { return o.th; });
  d.gain.resize(n);
  for (size_t t = 0; t < n; ++t) {
    const double mu = d.order[t].accuracy;
    d.gain[t] = suffix_table([&](const DpVariant& v, const DpOption& o) {
      return d.acc_coef * std::max(0.0, v.accuracy - mu) * o.th - d.core_coef * o.cores;
    });
  }
  return d;
}

// A partial assignment of order[0..j]. value = acc_coef * sum_{i<=j} (a_i - a_{i+1}) *
// C_i (the accuracy part of the objective, less what the remaining rate will add);
// cores and the load level are charged when the plan completes.
struct DpState {
  int cores = 0;
  int level = 0;
  double cap = 0;
  double value = 0;
  double bound = 0;  // the most any completion can reach
  int parent = -1;   // index into the previous stage's states
  int option = -1;   // index into DpVariant::options; -1 = variant not used
};

struct DpResult {
  bool feasible = false;
  double objective = -std::numeric_limits<double>::infinity();
  std::vector<int> pick;  // option index per variant, -1 unused
};

// Eq. 1 with lambda = target > 0: the best assignment whose capacity reaches target and
// beats `incumbent` (returned unchanged when none does). beam > 0 keeps only the `beam`
// states of highest bound per core count: a fast heuristic whose plan, as the incumbent
// of the exact pass (beam = 0), lets the bounds prune from the first variant on.
DpResult SolveForTarget(const InfAdapterProblem& p, const DpProblem& d, double target, size_t beam,
                        DpResult incumbent) {
  const int budget = p.budget_cores;
  const size_t nlevels = d.load_times.size();
  const size_t n = d.order.size();

  // stages[j] = the states after order[0..j-1]; stages[0] = the empty assignment.
  std::vector<std::vector<DpState>> stages(1, std::vector<DpState>(1));
  stages[0][0].bound = std::numeric_limits<double>::infinity();
  double best = incumbent.objective;
  size_t best_stage = 0;  // the completing variant is order[best_stage]
  int best_parent = -1, best_option = -1;

  std::vector<DpState> cand;
  std::vector<size_t> by_cap;
  std::vector<double> max_value(nlevels), max_charged(nlevels);
  for (size_t j = 0; j < n; ++j) {
    const DpVariant& v = d.order[j];
    const bool last = j + 1 == n;
    const double next_acc = last ? v.accuracy : d.order[j + 1].accuracy;
    const double step = d.acc_coef * (v.accuracy - next_acc);
    const std::vector<double>& rest = d.suffix_cap[j + 1];
    const std::vector<DpState>& prev = stages[j];
    cand.clear();
    auto push = [&](const DpState& s, int parent, int option, int cores, int level, double cap) {
      const double charged_level = d.load_coef * d.load_times[level];
      if (cap >= target) {  // complete: every rate is served; the variants after get nothing
        const double obj = s.value + InfAdapterAccuracyWeight(p) * v.accuracy -
                           d.core_coef * cores - charged_level;
        if (obj > best) {
          best = obj;
          best_stage = j;
          best_parent = parent;
          best_option = option;
        }
        return;
      }
      if (last) return;
      const double need = target - cap;
      // The fewest cores of order[j+1..] that can serve `need`.
      const int more =
          static_cast<int>(std::lower_bound(rest.begin(), rest.end(), need) - rest.begin());
      if (cores + more > budget) return;  // cannot be completed
      const double value = s.value + step * cap;
      double future = d.acc_coef * next_acc * need - d.core_coef * more;
      for (size_t t = j + 2; t < n; ++t) {
        future = std::min(
            future, d.acc_coef * d.order[t].accuracy * need + d.gain[t][j + 1][budget - cores]);
      }
      const double bound =
          value + d.acc_coef * next_acc * cap - d.core_coef * cores - charged_level + future;
      if (bound < best + 1e-12) return;
      cand.push_back({cores, level, cap, value, bound, parent, option});
    };
    for (size_t si = 0; si < prev.size(); ++si) {
      const DpState& s = prev[si];
      if (s.bound < best + 1e-12) continue;  // `best` rose since it was kept
      const int parent = static_cast<int>(si);
      push(s, parent, -1, s.cores, s.level, s.cap);
      for (size_t oi = 0; oi < v.options.size(); ++oi) {
        const DpOption& o = v.options[oi];
        if (s.cores + o.cores > budget) break;  // options ascend in cores
        push(s, parent, static_cast<int>(oi), s.cores + o.cores, std::max(s.level, o.level),
             s.cap + o.th);
      }
    }
    // Keep the undominated states: per core count, in descending capacity, a state is
    // dominated by an earlier one (capacity >= its) at level l' <= its level l with value
    // >= its, or at l' > l with value - load_coef * (t_l' - t_l) >= its.
    std::vector<DpState> next;
    by_cap.resize(cand.size());
    std::iota(by_cap.begin(), by_cap.end(), 0);
    std::sort(by_cap.begin(), by_cap.end(), [&](size_t a, size_t b) {
      const DpState& x = cand[a];
      const DpState& y = cand[b];
      if (x.cores != y.cores) return x.cores < y.cores;
      if (x.cap != y.cap) return x.cap > y.cap;
      if (x.value != y.value) return x.value > y.value;
      return x.level < y.level;
    });
    const double none = -std::numeric_limits<double>::infinity();
    size_t bucket = 0;  // where the current core count's states start in `next`
    auto end_bucket = [&] {
      if (beam == 0 || next.size() - bucket <= beam) return;
      std::nth_element(next.begin() + static_cast<std::ptrdiff_t>(bucket),
                       next.begin() + static_cast<std::ptrdiff_t>(bucket + beam), next.end(),
                       [](const DpState& x, const DpState& y) { return x.bound > y.bound; });
      next.resize(bucket + beam);
    };
    for (size_t i = 0; i < by_cap.size(); ++i) {
      const DpState& s = cand[by_cap[i]];
      if (i == 0 || cand[by_cap[i - 1]].cores != s.cores) {
        end_bucket();
        bucket = next.size();
        std::fill(max_value.begin(), max_value.end(), none);
        std::fill(max_charged.begin(), max_charged.end(), none);
      }
      bool dominated = false;
      const double charged = s.value - d.load_coef * d.load_times[s.level];
      for (size_t l = 0; l < nlevels && !dominated; ++l) {
        dominated =
            l <= static_cast<size_t>(s.level) ? max_value[l] >= s.value : max_charged[l] >= charged;
      }
      if (dominated) continue;
      max_value[s.level] = std::max(max_value[s.level], s.value);
      max_charged[s.level] = std::max(max_charged[s.level], charged);
      next.push_back(s);
    }
    end_bucket();
    stages.push_back(std::move(next));
  }

  if (best_parent < 0) return incumbent;
  DpResult r;
  r.feasible = true;
  r.objective = best;
  r.pick.assign(p.variants.size(), -1);
  if (best_option >= 0) {
    const DpVariant& v = d.order[best_stage];
    r.pick[v.m] = v.options[best_option].option;
  }
  int parent = best_parent;
  for (size_t j = best_stage; j-- > 0;) {
    const DpState& s = stages[j + 1][parent];
    if (s.option >= 0) r.pick[d.order[j].m] = d.order[j].options[s.option].option;
    parent = s.parent;
  }
  return r;
}

DpResult SolveForTarget(const InfAdapterProblem& p, double target) {
  const DpProblem d = Prepare(p, target);
  return SolveForTarget(p, d, target, 0, SolveForTarget(p, d, target, 4, DpResult{}));
}

}  // namespace

StatusOr<double> InfAdapterMaxCapacityDp(const InfAdapterProblem& p) {
  RETURN_IF_ERROR(ValidateInfAdapterProblem(p));
  // A multiple-choice knapsack over cores: best[k] = the highest capacity within k cores.
  std::vector<double> best(p.budget_cores + 1, 0.0);
  for (const InfAdapterCandidate& c : p.variants) {
    for (int k = p.budget_cores; k >= 0; --k) {
      for (const InfAdapterCoreOption& o : c.options) {
        if (o.cores > k) break;
        best[k] = std::max(best[k], best[k - o.cores] + o.throughput_rps);
      }
    }
  }
  return best[p.budget_cores];
}

StatusOr<InfAdapterPlan> SolveInfAdapterDp(const InfAdapterProblem& p) {
  RETURN_IF_ERROR(ValidateInfAdapterProblem(p));
  const std::vector<int> none(p.variants.size(), -1);
  if (p.lambda_rps <= 0) return EvaluateInfAdapterChoice(p, none, 0);
  double target = p.lambda_rps;
  DpResult r = SolveForTarget(p, target);
  if (!r.feasible) {
    ASSIGN_OR_RETURN(const double max_cap, InfAdapterMaxCapacityDp(p));
    target = std::min(p.lambda_rps, max_cap * (1 - 1e-9));
    if (target <= 0) {
      InfAdapterPlan plan = EvaluateInfAdapterChoice(p, none, 0);
      plan.shortfall_rps = p.lambda_rps;
      return plan;
    }
    r = SolveForTarget(p, target);
    if (!r.feasible) {
      return InternalError("InfAdapter DP: no plan reaches the maximum capacity " +
                           std::to_string(max_cap) + " rps");
    }
  }
  InfAdapterPlan plan = EvaluateInfAdapterChoice(p, r.pick, target);
  plan.shortfall_rps = std::max(0.0, p.lambda_rps - plan.served_rps);
  return plan;
}

}  // namespace sloserve

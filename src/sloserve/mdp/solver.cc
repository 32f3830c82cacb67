#include "sloserve/mdp/solver.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sloserve::mdp {

namespace {

// sum_i a[i] b[i] with four partial sums (lets the compiler vectorize without
// -ffast-math; the order of additions is fixed, so results are reproducible).
double Dot(const double* a, const double* b, int n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

// Expected next-state values per (kernel, phase): U[k][x] = sum_s' P_k(s' | x) V(s').
// Only the kernels with needed[ki] set are computed (the others keep stale values that no
// pair evaluated in this sweep reads).
void KernelValues(const MdpModel& m, const std::vector<double>& v, const std::vector<char>& needed,
                  std::vector<std::vector<double>>* u) {
  const int kw = m.workers();
  const int top = m.StateIndex(1, m.num_levels() - 1);
  u->resize(m.kernels().size());
  for (size_t ki = 0; ki < m.kernels().size(); ++ki) {
    const Kernel& kn = m.kernels()[ki];
    std::vector<double>& out = (*u)[ki];
    if (!kn.has_slack) {
      out.clear();
      continue;
    }
    if (!needed[ki]) continue;
    out.assign(kw, 0.0);
    for (int x = 0; x < kw; ++x) {
      double s = kn.p0[x] * v[top] + kn.full[x] * v[m.full_state()];
      for (int mm = 1; mm <= kn.nmax; ++mm) {
        const size_t r = static_cast<size_t>(x) * kn.nmax + (mm - 1);
        const int b = kn.band[2 * r], e = kn.band[2 * r + 1];
        if (b == e) continue;
        s += Dot(kn.p.data() + kn.offset[r], v.data() + m.StateIndex(mm, kn.jlo) + b, e - b);
      }
      out[x] = s;
    }
  }
}

double Expected(const MdpModel& m, int s, const Pair& p, const std::vector<double>& v,
                const std::vector<std::vector<double>>& u) {
  if (p.leftover >= 0) {
    const Leftover& lo = m.leftovers()[p.leftover];
    double e = lo.full * v[m.full_state()];
    const int jw = static_cast<int>(lo.jdist.size());
    for (int mm = 0; mm < static_cast<int>(lo.mdist.size()); ++mm) {
      if (lo.mdist[mm] == 0) continue;
      const double* vr = v.data() + m.StateIndex(lo.left + mm, lo.jlo);
      e += lo.mdist[mm] * Dot(lo.jdist.data(), vr, jw);
    }
    return e;
  }
  const int b = m.PhaseBegin(s);
  return Dot(m.Phase(s) + b, u[p.kernel].data() + b, m.PhaseEnd(s) - b);
}

}  // namespace

namespace {
bool Cancelled(const SolverOptions& options) {
  return options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed);
}
}  // namespace

SolveResult Solve(const MdpModel& m, const SolverOptions& options,
                  const std::vector<double>* initial_values) {
  const int ns = m.num_states();
  const int top = m.StateIndex(1, m.num_levels() - 1);
  const double inf = std::numeric_limits<double>::infinity();
  SolveResult res;
  res.choice.assign(ns, -1);
  std::vector<double> v(ns, 0.0), tv(ns, 0.0);
  std::vector<std::vector<double>> u;
  const bool ratio = options.criterion == Criterion::kAccuracyPerQuery;
  if (ratio && initial_values != nullptr && static_cast<int>(initial_values->size()) == ns) {
    v = *initial_values;
  }
  const int limit = ratio ? options.max_sweeps : options.fixed_sweeps;
  const double eta = 0.95;  // data transformation: 0 < eta < min duration (1 query)

  // Action elimination, exact (docs/ramsis-mdp.md#action-elimination): a pair's value is a
  // convex combination of values (weights eta/d, 1 - eta/d and probabilities summing to
  // 1), so from one sweep to the next it moves by at least the smallest and at most the
  // largest change of a value, i.e. within [lo, hi] shifted by the same reference for all
  // pairs. A pair `gap` below its state's best cannot be the best, nor tie it, until the
  // spans hi - lo of the sweeps since then add up to `gap`; until then it is not
  // evaluated, and a kernel that no evaluated pair reads is not computed. The maximum, its
  // first argmax and so every value and decision are the same as without elimination.
  const int np = static_cast<int>(m.pairs().size());
  std::vector<double> skip_until(np, -inf);  // gap + spans before the pair's last evaluation
  std::vector<char> eligible(np, 1);         // eta / d <= 1 (a batch of at least one query)
  for (int i = 0; i < np; ++i) {
    if (ratio && m.pairs()[i].action.batch < 1) eligible[i] = 0;
  }
  std::vector<char> evaluate(np, 1), kernel_needed(m.kernels().size(), 1);
  std::vector<double> val(np, 0.0);
  double spans = 0;  // sum of hi - lo over the sweeps done

  for (int sweep = 1; sweep <= limit; ++sweep) {
    if (Cancelled(options)) break;
    // Rounding: the bounds hold for exact arithmetic; the margin covers the rounding of
    // the dot products and of the probabilities' sums (1 within 1e-12) many times over.
    double vmax = 0;
    for (int s = 0; s < ns; ++s) vmax = std::max(vmax, std::fabs(v[s]));
    const double cutoff = spans + 1e-9 * (1 + vmax + spans);
    std::fill(kernel_needed.begin(), kernel_needed.end(), 0);
    for (int i = 0; i < np; ++i) {
      evaluate[i] = !options.eliminate_actions || !eligible[i] || !(skip_until[i] > cutoff);
      if (!evaluate[i]) continue;
      ++res.pair_evaluations;
      const Pair& p = m.pairs()[i];
      if (p.leftover < 0) kernel_needed[p.kernel] = 1;
    }
    KernelValues(m, v, kernel_needed, &u);
    double lo = inf, hi = -lo;
    for (int s = 1; s < ns; ++s) {
      double best = -inf;
      int best_i = -1;
      const int first = static_cast<int>(m.PairsBegin(s) - m.pairs().data());
      const int end = static_cast<int>(m.PairsEnd(s) - m.pairs().data());
      for (int i = first; i < end; ++i) {
        if (!evaluate[i]) continue;
        const Pair& p = m.pairs()[i];
        const double e = Expected(m, s, p, v, u);
        if (ratio) {
          const double d = p.action.batch;
          val[i] = p.reward / d + (eta / d) * (e - v[s]) + v[s];
        } else {
          val[i] = p.reward + e;
        }
        if (val[i] > best) {
          best = val[i];
          best_i = i;
        }
      }
      for (int i = first; i < end; ++i) {
        if (evaluate[i]) skip_until[i] = spans + (best - val[i]);
      }
      tv[s] = best;
      res.choice[s] = best_i;
      lo = std::min(lo, tv[s] - v[s]);
      hi = std::max(hi, tv[s] - v[s]);
    }
    tv[0] = tv[top];
    res.sweeps = sweep;
    spans += hi - lo;
    if (ratio) {
      res.gain_lo = lo;
      res.gain_hi = hi;
      const double ref = tv[top];
      for (int s = 0; s < ns; ++s) v[s] = tv[s] - ref;
      if (hi - lo < options.tolerance) {
        res.converged = true;
        break;
      }
    } else {
      std::swap(v, tv);
    }
  }
  if (!ratio) res.converged = true;  // a fixed number of sweeps, by definition
  if (ratio) res.values = std::move(v);
  return res;
}

ChainStats Stationary(const MdpModel& m, const std::vector<int>& choice,
                      const SolverOptions& options) {
  const int ns = m.num_states();
  const int kw = m.workers();
  const int top = m.StateIndex(1, m.num_levels() - 1);
  ChainStats out;
  std::vector<double> pi(ns, 0.0), next(ns, 0.0);
  for (int s = 1; s < ns; ++s) {
    const int first = static_cast<int>(m.PairsBegin(s) - m.pairs().data());
    if (static_cast<int>(choice.size()) != ns || choice[s] < first ||
        choice[s] >= first + m.NumPairs(s)) {
      out.invalid_state = s;
      out.stationary = std::move(pi);
      return out;
    }
  }
  pi[top] = 1.0;
  std::vector<std::vector<double>> mass(m.kernels().size());
  for (int it = 1; it <= options.eval_max_iterations; ++it) {
    if (Cancelled(options)) break;
    std::fill(next.begin(), next.end(), 0.0);
    for (auto& mk : mass) mk.assign(kw, 0.0);
    for (int s = 1; s < ns; ++s) {
      if (pi[s] == 0) continue;
      const Pair& p = m.pairs()[choice[s]];
      if (p.leftover >= 0) {
        const Leftover& lo = m.leftovers()[p.leftover];
        next[m.full_state()] += pi[s] * lo.full;
        for (int mm = 0; mm < static_cast<int>(lo.mdist.size()); ++mm) {
          const double a = pi[s] * lo.mdist[mm];
          if (a == 0) continue;
          double* dst = next.data() + m.StateIndex(lo.left + mm, lo.jlo);
          for (size_t jj = 0; jj < lo.jdist.size(); ++jj) dst[jj] += a * lo.jdist[jj];
        }
        continue;
      }
      const double* w = m.Phase(s);
      std::vector<double>& mk = mass[p.kernel];
      for (int x = m.PhaseBegin(s); x < m.PhaseEnd(s); ++x) mk[x] += pi[s] * w[x];
    }
    for (size_t ki = 0; ki < m.kernels().size(); ++ki) {
      const Kernel& kn = m.kernels()[ki];
      if (!kn.has_slack) continue;
      for (int x = 0; x < kw; ++x) {
        const double a = mass[ki][x];
        if (a == 0) continue;
        next[top] += a * kn.p0[x];
        next[m.full_state()] += a * kn.full[x];
        for (int mm = 1; mm <= kn.nmax; ++mm) {
          const size_t r = static_cast<size_t>(x) * kn.nmax + (mm - 1);
          double* dst = next.data() + m.StateIndex(mm, kn.jlo);
          const int b = kn.band[2 * r];
          const double* pr = kn.p.data() + kn.offset[r] - b;  // pr[jj], jj in the band
          for (int jj = b; jj < kn.band[2 * r + 1]; ++jj) dst[jj] += a * pr[jj];
        }
      }
    }
    // Lazy step (same stationary distribution, no periodicity) and renormalisation.
    double total = 0, diff = 0;
    for (int s = 0; s < ns; ++s) {
      next[s] = 0.5 * (pi[s] + next[s]);
      total += next[s];
    }
    for (int s = 0; s < ns; ++s) {
      next[s] /= total;
      diff += std::fabs(next[s] - pi[s]);
    }
    std::swap(pi, next);
    out.iterations = it;
    if (diff < options.eval_tolerance) {
      out.converged = true;
      break;
    }
  }
  out.stationary = std::move(pi);
  return out;
}

}  // namespace sloserve::mdp

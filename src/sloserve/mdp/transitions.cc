#include "sloserve/mdp/transitions.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sloserve::mdp {

namespace {

// Row bands leave out the tails below this: a dropped probability times a value (an
// accuracy, <= 100) is below 1e-27, far under the last bit of any value or expectation.
// It shrinks the bands 3-5x (Poisson tails fall off faster than geometrically).
constexpr double kBandEpsilon = 1e-30;

// Continued fraction of the incomplete beta function (modified Lentz).
double BetaContinuedFraction(double a, double b, double x) {
  const double tiny = 1e-300;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-15) break;
  }
  return h;
}

// Regularized incomplete beta I_x(a, b): the CDF of Beta(a, b) at x.
double BetaCdf(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double lbt =
      LogGamma(a + b) - LogGamma(a) - LogGamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(lbt) * BetaContinuedFraction(a, b, x) / a;
  return 1 - std::exp(lbt) * BetaContinuedFraction(b, a, 1 - x) / b;
}

}  // namespace

std::pair<int, int> AlignedBand(const double* row, int n) {
  int b = 0, e = n;
  while (b < e && row[b] < kBandEpsilon) ++b;
  while (e > b && row[e - 1] < kBandEpsilon) --e;
  if (b == e) return {0, 0};
  b -= b % 4;
  return {b, std::min(n, b + (e - b + 3) / 4 * 4)};
}

const std::vector<double>& CountCdfCache::Cdf(const ArrivalCounts& counts, double t_us, int kmax) {
  auto [it, inserted] = cdfs_.try_emplace({t_us, kmax});
  if (inserted) counts.Cdf(t_us, kmax, &it->second);
  return it->second;
}

void PhaseWeights(const TransitionContext& c, int n, int64_t head_age_us, double* w) {
  const int k = c.k;
  std::vector<double> lp;
  c.counts->LogPmfFromArrival(static_cast<double>(head_age_us), (n - 1) * k, n * k - 1, &lp);
  double mx = -INFINITY;
  for (double v : lp) mx = std::max(mx, v);
  if (!std::isfinite(mx)) {
    for (int x = 0; x < k; ++x) w[x] = 1.0 / k;
    return;
  }
  double s = 0;
  for (int x = 0; x < k; ++x) {
    w[x] = std::exp(lp[x] - mx);
    s += w[x];
  }
  for (int x = 0; x < k; ++x) w[x] /= s;
}

void BuildCountKernel(const TransitionContext& c, Kernel* kernel) {
  const int k = c.k, n = c.n;
  const int kmax = (n + 2) * k;
  const std::vector<double>& cdf =
      c.cache->Cdf(*c.counts, static_cast<double>(kernel->tau_us), kmax);
  auto f = [&](int i) { return i < 0 ? 0.0 : cdf[std::min(i, kmax)]; };
  kernel->count.assign(static_cast<size_t>(k) * (n + 1), 0.0);
  for (int x = 0; x < k; ++x) {
    for (int m = 0; m <= n; ++m) {
      const int lo = m * k - x, hi = m * k - x + k - 1;
      kernel->count[x * (n + 1) + m] = std::max(0.0, f(hi) - f(lo - 1));
    }
  }
}

void BuildSlackKernel(const TransitionContext& c, Kernel* kernel) {
  if (kernel->has_slack) return;
  const int k = c.k, n = c.n;
  const std::vector<int64_t>& levels = *c.levels;
  const int nl = static_cast<int>(levels.size());
  const double tau = static_cast<double>(kernel->tau_us);
  const double slo = static_cast<double>(c.slo_us);
  const int kmax = (n + 2) * k;

  // u[j]: the first arrival's time after the action starts at which its slack (at the
  // next epoch) crosses level j. Level j' gets first arrivals in [u[j'], u[j'+1]).
  std::vector<double> u(nl + 1);
  u[0] = 0;
  u[nl] = tau;
  for (int j = 1; j < nl; ++j) {
    u[j] = std::clamp(tau - slo + static_cast<double>(levels[j]), 0.0, tau);
  }

  // G(u)[(r-1) * n + (n'-1)] = P(N(0,u) <= r - 1, worker count during tau = n'), where r =
  // K - x central arrivals are needed for the worker's first query.
  // With i = r - a: G = sum_{a<r} pmf_u[a] d_m[r - a], d_m[i] = F(i + m K - 1) - F(i + (m-1) K -
  // 1), F the count CDF over tau - u. tau - u = SLO - T_j for every kernel whose u is inside (0,
  // tau), so F comes from the shared cache and d_m is computed once per (u, m).
  std::vector<double> pmf_b, diffs;
  auto compute_g = [&](double uu, std::vector<double>* g) {
    g->assign(static_cast<size_t>(k) * n, 0.0);
    if (uu >= tau) return;
    const std::vector<double>& cdf_b = c.cache->Cdf(*c.counts, tau - uu, kmax);
    auto f = [&](int i) { return i < 0 ? 0.0 : cdf_b[std::min(i, kmax)]; };
    // Rows m past the first whose count CDF is already 1 carry no mass.
    int mstop = n + 1;
    for (int m = 1; m <= n; ++m) {
      if (f((m - 1) * k) >= 1.0) {
        mstop = m;
        break;
      }
    }
    diffs.assign(static_cast<size_t>(n) * (k + 1), 0.0);  // [m-1][i], i = 1..k
    for (int m = 1; m < mstop; ++m) {
      double* d = diffs.data() + static_cast<size_t>(m - 1) * (k + 1);
      for (int i = 1; i <= k; ++i) d[i] = f(i + m * k - 1) - f(i + (m - 1) * k - 1);
    }
    if (uu <= 0) {
      for (int r = 1; r <= k; ++r) {
        for (int m = 1; m <= n; ++m) {
          const double v = diffs[static_cast<size_t>(m - 1) * (k + 1) + r];
          (*g)[(r - 1) * n + (m - 1)] = std::max(0.0, v);
        }
      }
      return;
    }
    c.counts->Pmf(uu, k - 1, &pmf_b);
    for (int r = 1; r <= k; ++r) {
      for (int m = 1; m < mstop; ++m) {
        const double* d = diffs.data() + static_cast<size_t>(m - 1) * (k + 1);
        // s = sum_{a<r} pmf_b[a] d[r - a], two partial sums.
        double s0 = 0, s1 = 0;
        int a = 0;
        for (; a + 2 <= r; a += 2) {
          s0 += pmf_b[a] * d[r - a];
          s1 += pmf_b[a + 1] * d[r - a - 1];
        }
        if (a < r) s0 += pmf_b[a] * d[r - a];
        const double s = s0 + s1;
        (*g)[(r - 1) * n + (m - 1)] = std::max(0.0, s);
      }
    }
  };

  // Levels with mass are those whose first-arrival interval [u[j], u[j+1]) is not empty:
  // known before any G is computed, so the table holds only their jw columns.
  int jlo = nl, jhi = -1;
  for (int j = 0; j < nl; ++j) {
    if (u[j + 1] > u[j]) {
      jlo = std::min(jlo, j);
      jhi = std::max(jhi, j);
    }
  }
  const int tw = std::max(jhi - jlo + 1, 0);
  // [x][n'-1][j' - jlo], every entry written below; the buffer is the build's, reused by
  // all its kernels (a fresh zeroed table per kernel cost more than computing it).
  std::vector<double> own_table;
  std::vector<double>& table = c.scratch != nullptr ? *c.scratch : own_table;
  table.resize(static_cast<size_t>(k) * n * tw);
  auto cell = [&](int x, int m, int j) -> double& {
    return table[(static_cast<size_t>(x) * n + (m - 1)) * tw + (j - jlo)];
  };
  std::vector<double> g_lo, g_hi;
  compute_g(u[0], &g_lo);
  for (int j = jlo; j <= jhi; ++j) {
    if (u[j + 1] > u[j]) {
      compute_g(u[j + 1], &g_hi);
      for (int x = 0; x < k; ++x) {
        const int r = k - x;
        for (int m = 1; m <= n; ++m) {
          const double v = g_lo[(r - 1) * n + (m - 1)] - g_hi[(r - 1) * n + (m - 1)];
          cell(x, m, j) = std::max(0.0, v);
        }
      }
      std::swap(g_lo, g_hi);
    } else {
      for (int x = 0; x < k; ++x) {
        for (int m = 1; m <= n; ++m) cell(x, m, j) = 0.0;
      }
    }
  }

  const std::vector<double>& cdf_tau = c.cache->Cdf(*c.counts, tau, kmax);
  kernel->p0.assign(k, 0.0);
  for (int x = 0; x < k; ++x) kernel->p0[x] = cdf_tau[k - x - 1];

  // Trim: levels with mass, and n' up to the last with non-negligible mass.
  int nmax = 0;
  for (int x = 0; x < k; ++x) {
    for (int m = 1; m <= n; ++m) {
      for (int j = jlo; j <= jhi; ++j) {
        if (cell(x, m, j) > 1e-15) {
          nmax = std::max(nmax, m);
        }
      }
    }
  }
  if (jhi < jlo) {
    jlo = 0;
    jhi = -1;
    nmax = 0;
  }
  const int jw = jhi - jlo + 1;
  kernel->nmax = nmax;
  kernel->jlo = jlo;
  kernel->jhi = jhi;
  kernel->full.assign(k, 0.0);
  for (int x = 0; x < k; ++x) {
    double s = kernel->p0[x];
    for (int m = 1; m <= nmax; ++m) {
      for (int j = jlo; j <= jhi; ++j) s += cell(x, m, j);
    }
    kernel->full[x] = std::max(0.0, 1.0 - s);
  }
  // Only the bands are stored (3-10x fewer entries than the rows: less memory to fill
  // and to stream through in every sweep).
  const size_t rows = static_cast<size_t>(k) * nmax;
  kernel->band.assign(rows * 2, 0);
  kernel->offset.assign(rows + 1, 0);
  for (size_t r = 0; r < rows; ++r) {
    const std::pair<int, int> band = AlignedBand(&table[r / nmax * n * tw + r % nmax * tw], jw);
    kernel->band[2 * r] = band.first;
    kernel->band[2 * r + 1] = band.second;
    kernel->offset[r + 1] = kernel->offset[r] + (band.second - band.first);
  }
  kernel->p.resize(kernel->offset[rows]);
  for (size_t r = 0; r < rows; ++r) {
    const double* row = &table[r / nmax * n * tw + r % nmax * tw];
    double* out = kernel->p.data() + kernel->offset[r];
    for (int j = kernel->band[2 * r]; j < kernel->band[2 * r + 1]; ++j) {
      // Subnormal probabilities (< 2.2e-308) are stored as 0: every product with them
      // is a slow microcode assist in value iteration, and none changes a sum of
      // normal-sized values (they are absorbed by rounding).
      *out++ = row[j] < std::numeric_limits<double>::min() ? 0.0 : row[j];
    }
  }
  kernel->has_slack = true;
}

Leftover BuildLeftover(const TransitionContext& c, const Kernel& kernel, const double* phase, int n,
                       int j, int b) {
  const int k = c.k, nq = c.n;
  const std::vector<int64_t>& levels = *c.levels;
  const int nl = static_cast<int>(levels.size());
  Leftover out;
  out.left = n - b;
  const int mmax = nq - out.left;
  out.mdist.assign(mmax + 1, 0.0);
  double s = 0;
  for (int m = 0; m <= mmax; ++m) {
    double v = 0;
    for (int x = 0; x < k; ++x) v += phase[x] * kernel.count[x * (nq + 1) + m];
    out.mdist[m] = v;
    s += v;
  }
  out.full = std::max(0.0, 1.0 - s);

  // New head: the b-th worker query after the old head, arrived at t in [0, a] after it
  // (a = the old head's age); next slack = T_j + t - tau.
  const double a = static_cast<double>(c.slo_us - levels[j]);
  const double tau = static_cast<double>(kernel.tau_us);
  const double tj = static_cast<double>(levels[j]);
  // Given k_A central arrivals in the head's age (Poisson: uniform order statistics), the
  // new head is central arrival number b K: t / a ~ Beta(b K, k_A - b K + 1). k_A is taken
  // at its mean under the phase weights, (n - 1) K + E[x].
  double mean_x = 0;
  for (int x = 0; x < k; ++x) mean_x += phase[x] * x;
  const double alpha = static_cast<double>(b) * k;
  const double beta = static_cast<double>(n - 1) * k + mean_x - alpha + 1;
  auto cdf_t = [&](double t) {
    if (a <= 0) return t >= 0 ? 1.0 : 0.0;
    return BetaCdf(alpha, std::max(beta, 1e-9), std::clamp(t / a, 0.0, 1.0));
  };
  std::vector<double> dist(nl, 0.0);
  for (int jj = 0; jj < nl; ++jj) {
    const double lo = jj == 0 ? -1e300 : static_cast<double>(levels[jj]) - tj + tau;
    const double hi = jj + 1 == nl ? 1e300 : static_cast<double>(levels[jj + 1]) - tj + tau;
    dist[jj] = std::max(0.0, cdf_t(hi) - cdf_t(lo));
  }
  int lo = 0, hi = nl - 1;
  while (lo < hi && dist[lo] < 1e-17) ++lo;
  while (hi > lo && dist[hi] < 1e-17) --hi;
  double sum = 0;
  for (int jj = lo; jj <= hi; ++jj) sum += dist[jj];
  out.jlo = lo;
  out.jdist.assign(dist.begin() + lo, dist.begin() + hi + 1);
  if (sum > 0) {
    for (double& v : out.jdist) v /= sum;
  }
  return out;
}

}  // namespace sloserve::mdp

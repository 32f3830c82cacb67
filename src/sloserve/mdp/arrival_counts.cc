#include "sloserve/mdp/arrival_counts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace sloserve::mdp {

double LogGamma(double x) {
  // Lanczos approximation, g = 7, n = 9 (Numerical Recipes / Boost coefficients).
  static constexpr double kCoef[9] = {
      0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
      771.32342877765313,   -176.61502916214059,   12.507343278686905,
      -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  if (x < 0.5) {  // reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x), here 0 < x < 0.5
    return std::log(std::numbers::pi / std::sin(std::numbers::pi * x)) - LogGamma(1 - x);
  }
  x -= 1;
  double a = kCoef[0];
  const double t = x + 7.5;
  for (int i = 1; i < 9; ++i) a += kCoef[i] / (x + i);
  return 0.5 * std::log(2 * std::numbers::pi) + (x + 0.5) * std::log(t) - t + std::log(a);
}

namespace {

// log(k) and LogGamma(k + 1) for small integers, computed once by the same functions the
// loops called per entry before (so results are bit-identical); the count distributions
// need them for every k up to (N + 2) K, thousands of times per MDP.
constexpr int kTableSize = 1 << 14;
// Below this std::exp returns exactly 0 (the smallest subnormal is e^-744.4).
constexpr double kExpUnderflow = -746.0;

const std::vector<double>& LogTable() {
  static const std::vector<double> table = [] {
    std::vector<double> t(kTableSize);
    for (int k = 1; k < kTableSize; ++k) t[k] = std::log(static_cast<double>(k));
    return t;
  }();
  return table;
}

const std::vector<double>& LogFactorialTable() {
  static const std::vector<double> table = [] {
    std::vector<double> t(kTableSize);
    for (int k = 0; k < kTableSize; ++k) t[k] = LogGamma(k + 1.0);
    return t;
  }();
  return table;
}

double LogOf(int k) {
  return k < kTableSize ? LogTable()[k] : std::log(static_cast<double>(k));
}

double LogFactorial(int k) {
  return k < kTableSize ? LogFactorialTable()[k] : LogGamma(k + 1.0);
}

// Series for P(a, x), good for x < a + 1.
double GammaPSeries(double a, double x) {
  double ap = a, sum = 1.0 / a, del = sum;
  for (int n = 0; n < 100000; ++n) {
    ap += 1;
    del *= x / ap;
    sum += del;
    if (std::fabs(del) < std::fabs(sum) * 1e-16) break;
  }
  return sum * std::exp(-x + a * std::log(x) - LogGamma(a));
}

// Continued fraction for Q(a, x) = 1 - P(a, x), good for x >= a + 1 (Lentz).
double GammaQContinuedFraction(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-16) break;
  }
  return std::exp(-x + a * std::log(x) - LogGamma(a)) * h;
}

}  // namespace

double RegularizedGammaP(double a, double x) {
  if (x <= 0) return 0;
  if (a <= 0) return 1;
  if (x < a + 1) return std::clamp(GammaPSeries(a, x), 0.0, 1.0);
  return std::clamp(1 - GammaQContinuedFraction(a, x), 0.0, 1.0);
}

ArrivalCounts::ArrivalCounts(ArrivalModel model, double rate_per_us)
    : model_(model), rate_(rate_per_us) {
  shape_ = model.kind == ArrivalKind::kGamma ? 1.0 / (model.cv * model.cv) : 1.0;
}

void ArrivalCounts::Pmf(double t_us, int kmax, std::vector<double>* pmf) const {
  pmf->assign(kmax + 1, 0.0);
  if (t_us <= 0) {
    (*pmf)[0] = 1;
    return;
  }
  if (model_.kind == ArrivalKind::kPoisson) {
    const double mu = rate_ * t_us, lmu = std::log(mu);
    double lp = -mu;
    for (int k = 0; k <= kmax; ++k) {
      if (k > 0) lp += lmu - LogOf(k);
      // Past the mode lp only falls: once exp underflows to 0 the rest is 0 too.
      if (lp < kExpUnderflow && k > mu) break;
      (*pmf)[k] = std::exp(lp);
    }
    return;
  }
  std::vector<double> cdf;
  Cdf(t_us, kmax, &cdf);
  double prev = 0;
  for (int k = 0; k <= kmax; ++k) {
    (*pmf)[k] = std::max(0.0, cdf[k] - prev);
    prev = std::max(prev, cdf[k]);
  }
}

void ArrivalCounts::Cdf(double t_us, int kmax, std::vector<double>* cdf) const {
  cdf->assign(kmax + 1, 1.0);
  if (t_us <= 0) return;
  if (model_.kind == ArrivalKind::kPoisson) {
    std::vector<double> pmf;
    Pmf(t_us, kmax, &pmf);
    double s = 0;
    for (int k = 0; k <= kmax; ++k) {
      s += pmf[k];
      (*cdf)[k] = std::min(1.0, s);
    }
    return;
  }
  // Stationary Gamma renewal: P(N >= k) = lambda (I(k-1) - I(k)).
  const double a = shape_, beta = shape_ * rate_, x = beta * t_us;
  auto integral = [&](int m) {
    if (m == 0) return t_us;
    const double am = m * a;
    return t_us * RegularizedGammaP(am, x) - (am / beta) * RegularizedGammaP(am + 1, x);
  };
  double prev_i = integral(0);
  double running_max = 0;
  for (int k = 0; k <= kmax; ++k) {
    const double next_i = integral(k + 1);
    const double tail = std::clamp(rate_ * (prev_i - next_i), 0.0, 1.0);  // P(N >= k+1)
    running_max = std::max(running_max, 1.0 - tail);
    (*cdf)[k] = running_max;
    prev_i = next_i;
    if (tail < 1e-300) break;  // the rest stays 1
  }
}

void ArrivalCounts::LogPmfFromArrival(double t_us, int kmin, int kmax,
                                      std::vector<double>* out) const {
  const double ninf = -std::numeric_limits<double>::infinity();
  out->assign(std::max(0, kmax - kmin + 1), ninf);
  if (t_us <= 0) {
    if (kmin <= 0 && 0 <= kmax) (*out)[-kmin] = 0;
    return;
  }
  if (model_.kind == ArrivalKind::kPoisson) {
    const double mu = rate_ * t_us, lmu = std::log(mu);
    for (int k = kmin; k <= kmax; ++k) {
      (*out)[k - kmin] = k * lmu - mu - LogFactorial(k);
    }
    return;
  }
  const double x = shape_ * rate_ * t_us;
  auto at_least = [&](int k) { return k == 0 ? 1.0 : RegularizedGammaP(k * shape_, x); };
  double upper = at_least(kmin);
  for (int k = kmin; k <= kmax; ++k) {
    const double next = at_least(k + 1);
    const double p = upper - next;
    (*out)[k - kmin] = p > 0 ? std::log(p) : ninf;
    upper = next;
  }
}

}  // namespace sloserve::mdp

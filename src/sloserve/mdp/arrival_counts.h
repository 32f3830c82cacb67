#pragma once
// Arrival-count distributions of the central queue: P(k arrivals in an interval of length
// t), for Poisson and Gamma-renewal arrivals (docs/ramsis-mdp.md#arrival-counts).
//
// Poisson: exact. Gamma(shape a = 1/cv^2, rate a*lambda) inter-arrivals: two counts.
//  - from an arrival epoch (ordinary renewal): P(N(t) >= k) = P(k a, a lambda t), the
//    regularized lower incomplete gamma (the sum of k Gamma(a) gaps is Gamma(k a));
//  - from an arbitrary time (stationary renewal, first gap = equilibrium residual):
//    P(N(t) >= k) = lambda * (I(k-1) - I(k)), I(m) = integral_0^t P(m a, a lambda s) ds
//    = t P(m a, a lambda t) - (m a / (a lambda)) P(m a + 1, a lambda t), I(0) = t.
// The MDP then treats counts in disjoint intervals as independent (the paper's
// independent-increments assumption), which is exact for Poisson only.
#include <vector>

#include "sloserve/mdp/options.h"

namespace sloserve::mdp {

// Regularized lower incomplete gamma P(a, x), a > 0, x >= 0.
double RegularizedGammaP(double a, double x);
// log Gamma(x) for x > 0 (Lanczos, ~1e-15 relative). Unlike std::lgamma it writes no
// global (signgam), so policy sets can be generated on several threads.
double LogGamma(double x);

class ArrivalCounts {
 public:
  // rate: arrivals per microsecond at the central queue.
  ArrivalCounts(ArrivalModel model, double rate_per_us);

  // cdf[k] = P(N(t) <= k), k = 0..kmax, for an interval starting at an arbitrary time.
  void Cdf(double t_us, int kmax, std::vector<double>* cdf) const;
  // pmf[k] = P(N(t) = k), k = 0..kmax, for an interval starting at an arbitrary time.
  void Pmf(double t_us, int kmax, std::vector<double>* pmf) const;
  // log P(N(t) = k) for k = kmin..kmax (entry k - kmin), interval starting at an arrival
  // (the arrival itself not counted). -inf where the probability is 0.
  void LogPmfFromArrival(double t_us, int kmin, int kmax, std::vector<double>* out) const;

  double rate_per_us() const { return rate_; }
  const ArrivalModel& model() const { return model_; }

 private:
  ArrivalModel model_;
  double rate_;
  double shape_;  // gamma shape a = 1/cv^2 (1 for Poisson)
};

}  // namespace sloserve::mdp

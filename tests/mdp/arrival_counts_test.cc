// Arrival-count distributions: Poisson, Gamma (cv = 1 must equal Poisson), incomplete gamma.
#include "sloserve/mdp/arrival_counts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace sloserve::mdp {
namespace {

TEST(ArrivalCounts, RegularizedGammaMatchesClosedForms) {
  for (double x : {0.01, 0.5, 1.0, 3.0, 10.0, 40.0}) {
    EXPECT_NEAR(RegularizedGammaP(1, x), 1 - std::exp(-x), 1e-12);
    EXPECT_NEAR(RegularizedGammaP(2, x), 1 - std::exp(-x) * (1 + x), 1e-12);
  }
  EXPECT_EQ(RegularizedGammaP(3, 0), 0);
}

TEST(ArrivalCounts, LogGammaMatchesStdLgamma) {
  for (double x : {0.01, 0.3, 0.5, 1.0, 1.5, 2.0, 7.25, 33.0, 120.5, 2000.0, 1e5}) {
    EXPECT_NEAR(LogGamma(x), std::lgamma(x), 1e-12 * std::max(1.0, std::fabs(std::lgamma(x)))) << x;
  }
}

TEST(ArrivalCounts, PoissonPmfSumsToOneWithMeanRateTimesT) {
  ArrivalCounts c({ArrivalKind::kPoisson, 1}, 2e-3);  // 2000 qps
  std::vector<double> pmf;
  c.Pmf(50000, 400, &pmf);  // mean 100
  double s = 0, mean = 0;
  for (size_t k = 0; k < pmf.size(); ++k) {
    s += pmf[k];
    mean += k * pmf[k];
  }
  EXPECT_NEAR(s, 1, 1e-12);
  EXPECT_NEAR(mean, 100, 1e-9);
}

TEST(ArrivalCounts, GammaWithCvOneEqualsPoisson) {
  ArrivalCounts p({ArrivalKind::kPoisson, 1}, 1e-3);
  ArrivalCounts g({ArrivalKind::kGamma, 1.0}, 1e-3);
  for (double t : {500.0, 5000.0, 30000.0}) {
    std::vector<double> a, b;
    p.Cdf(t, 80, &a);
    g.Cdf(t, 80, &b);
    for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 1e-9) << "t=" << t << " k=" << k;
    p.LogPmfFromArrival(t, 3, 20, &a);
    g.LogPmfFromArrival(t, 3, 20, &b);
    for (size_t k = 0; k < a.size(); ++k) {
      if (std::isfinite(a[k]) && a[k] > -30) {
        EXPECT_NEAR(a[k], b[k], 1e-6);
      }
    }
  }
}

TEST(ArrivalCounts, StationaryGammaCountHasMeanRateTimesT) {
  for (double cv : {0.5, 2.0}) {
    ArrivalCounts g({ArrivalKind::kGamma, cv}, 1e-3);
    std::vector<double> pmf;
    g.Pmf(20000, 400, &pmf);  // mean 20
    double s = 0, mean = 0;
    for (size_t k = 0; k < pmf.size(); ++k) {
      s += pmf[k];
      mean += k * pmf[k];
    }
    EXPECT_NEAR(s, 1, 1e-6) << cv;
    EXPECT_NEAR(mean, 20, 1e-3) << cv;
  }
}

}  // namespace
}  // namespace sloserve::mdp

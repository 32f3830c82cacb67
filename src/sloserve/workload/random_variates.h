#pragma once
// Portable random variates on top of sloserve::Rng. Every sampler in workload/ draws
// through these functions (inverse transform, Box-Muller, Marsaglia-Tsang), never through
// <random> distributions, so a seed gives the same numbers on every standard library.
#include <cmath>
#include <cstdint>
#include <numbers>

#include "sloserve/core/rng.h"

namespace sloserve {

// Uniform double in (0, 1]: safe to take the log of.
inline double UniformOpen01(Rng& rng) {
  return 1.0 - Uniform01(rng);
}

// Exponential with mean 1 (inverse transform).
inline double StdExponential(Rng& rng) {
  return -std::log(UniformOpen01(rng));
}

// Standard normal by Box-Muller (cosine branch only: stateless, two uniforms per draw).
inline double StdNormal(Rng& rng) {
  const double u1 = UniformOpen01(rng);
  const double u2 = Uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

inline double Normal(Rng& rng, double mean, double stddev) {
  return mean + stddev * StdNormal(rng);
}

// Log-normal: exp(N(mu, sigma^2)).
inline double LogNormal(Rng& rng, double mu, double sigma) {
  return std::exp(Normal(rng, mu, sigma));
}

// Uniform integer in [lo, hi] (inclusive). Requires lo <= hi.
inline int64_t UniformInt(Rng& rng, int64_t lo, int64_t hi) {
  const double span = static_cast<double>(hi - lo + 1);
  const auto k = static_cast<int64_t>(Uniform01(rng) * span);
  return lo + (k > hi - lo ? hi - lo : k);
}

// Gamma(shape, scale=1) by Marsaglia-Tsang (2000); shape < 1 by the boost
// Gamma(a) = Gamma(a + 1) * U^(1/a), computed in log space. Requires shape > 0.
double StdGamma(Rng& rng, double shape);

// Standard normal CDF and density.
inline double NormalCdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}
inline double NormalPdf(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
}

}  // namespace sloserve

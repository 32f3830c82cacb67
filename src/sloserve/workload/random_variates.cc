#include "sloserve/workload/random_variates.h"

namespace sloserve {

double StdGamma(Rng& rng, double shape) {
  if (shape < 1.0) {
    const double g = StdGamma(rng, shape + 1.0);
    return std::exp(std::log(g) + std::log(UniformOpen01(rng)) / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double x = 0.0;
    double v = 0.0;
    do {
      x = StdNormal(rng);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = UniformOpen01(rng);
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v;
    if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v;
  }
}

}  // namespace sloserve

#include "sloserve/workload/popularity.h"

#include <cmath>

namespace sloserve {

std::vector<double> ZipfShares(size_t n, double s, double total) {
  std::vector<double> out(n);
  double sum = 0;
  for (size_t r = 0; r < n; ++r) sum += out[r] = std::pow(static_cast<double>(r + 1), -s);
  for (double& w : out) w *= total / sum;
  return out;
}

}  // namespace sloserve

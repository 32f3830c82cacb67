#pragma once
// Popularity of the models of a multi-model deployment (docs/multi-model.md): the share
// of one workload each model receives. Zipf: the model of rank r (1-based, in the order
// the models are listed) gets a share proportional to 1 / r^s; s = 0 is equal shares.
#include <cstddef>
#include <vector>

namespace sloserve {

inline constexpr double kMaxZipfS = 10;

// `n` shares summing to `total` (n >= 1, 0 <= s <= kMaxZipfS).
std::vector<double> ZipfShares(size_t n, double s, double total = 1.0);

}  // namespace sloserve

#include "sloserve/policy/planning/kairos_config_pick.h"

#include <algorithm>
#include <numeric>

namespace sloserve {

std::vector<RankedConfig> RankByBound(const ConfigSpace& space,
                                      const std::vector<InstanceCounts>& configs,
                                      const std::vector<double>& bounds) {
  std::vector<RankedConfig> ranked;
  ranked.reserve(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) ranked.push_back({configs[i], bounds[i]});
  std::stable_sort(ranked.begin(), ranked.end(), [&](const RankedConfig& a, const RankedConfig& b) {
    if (a.bound != b.bound) return a.bound > b.bound;
    const double ca = space.Cost(a.counts), cb = space.Cost(b.counts);
    if (ca != cb) return ca < cb;
    return a.counts < b.counts;
  });
  return ranked;
}

size_t SimilarityPick(const std::vector<RankedConfig>& ranked, size_t base, size_t top,
                      size_t same_base_top) {
  const size_t k = std::min(top, ranked.size());
  const size_t m = std::min(same_base_top, ranked.size());
  bool same_base = true;
  for (size_t i = 1; i < m; ++i) same_base &= ranked[i].counts[base] == ranked[0].counts[base];
  if (same_base) return 0;
  size_t best = 0;
  double best_sum = -1;
  for (size_t i = 0; i < k; ++i) {
    double sum = 0;
    for (size_t j = 0; j < k; ++j) {
      for (size_t t = 0; t < ranked[i].counts.size(); ++t) {
        const double d = ranked[i].counts[t] - ranked[j].counts[t];
        sum += d * d;
      }
    }
    // Strictly less: on a tie the higher-bound configuration (earlier) stays.
    if (best_sum < 0 || sum < best_sum) {
      best_sum = sum;
      best = i;
    }
  }
  return best;
}

}  // namespace sloserve

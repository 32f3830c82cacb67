#pragma once
// Ranking configurations by upper bound and Kairos' similarity-based pick among the best
// (HPDC'23, section 5.2, last paragraphs): if the top-3 configurations by upper bound
// have the same number of base instances, take the top one; otherwise, among the top
// 10, take the one whose summed squared Euclidean distance (in instance counts) to the
// other nine is least, the centroid of the high-bound region. No configuration is
// evaluated.
#include <vector>

#include "sloserve/policy/planning/instance_configs.h"

namespace sloserve {

struct RankedConfig {
  InstanceCounts counts;
  double bound = 0;
};

// All configurations, highest bound first (ties: cheaper first, then lexicographic).
std::vector<RankedConfig> RankByBound(const ConfigSpace& space,
                                      const std::vector<InstanceCounts>& configs,
                                      const std::vector<double>& bounds);

// Index into `ranked` of Kairos' pick. `base` is the base type's HardwareId. `ranked`
// must not be empty.
size_t SimilarityPick(const std::vector<RankedConfig>& ranked, size_t base, size_t top = 10,
                      size_t same_base_top = 3);

}  // namespace sloserve

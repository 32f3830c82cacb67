#pragma once
// An empirical latency distribution: the raw measured samples, sorted, in microseconds.
// The MDP and the simulator need the distribution, not only a mean. Immutable: copies
// share the samples, which live in owned vectors or in a mapped suite cache
// (suite_cache.h).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sloserve/core/rng.h"
#include "sloserve/core/time.h"

namespace sloserve {

class LatencyDistribution {
 public:
  LatencyDistribution() = default;
  // `samples_us` need not be sorted; must be non-empty and non-negative (checked by loaders).
  explicit LatencyDistribution(std::vector<int64_t> samples_us);
  // Samples stored elsewhere (a mapped suite cache): `samples` in measurement order,
  // `sorted` the same ascending, `mean_us` as the vector constructor rounds it; `owner`
  // keeps the memory alive. Not checked: the cache wrote them from a constructed one.
  static LatencyDistribution FromStored(std::span<const int64_t> samples,
                                        std::span<const int64_t> sorted, int64_t mean_us,
                                        std::shared_ptr<const void> owner);

  bool empty() const { return sorted_us_.empty(); }
  size_t size() const { return sorted_us_.size(); }
  std::span<const int64_t> sorted_samples_us() const { return sorted_us_; }
  // The samples in the order given (measurement order): warm-up samples stay visible and
  // Kairos' load component stays paired index by index with its latency samples.
  std::span<const int64_t> samples_us() const { return samples_us_; }
  int64_t mean_us() const { return mean_us_; }

  // Quantile q in [0,1] by linear interpolation between order statistics (numpy default).
  Duration Quantile(double q) const;
  Duration Mean() const { return Duration(mean_us_); }
  Duration Min() const { return Duration(sorted_us_.front()); }
  Duration Max() const { return Duration(sorted_us_.back()); }
  // One sample drawn uniformly from the measured samples.
  Duration Sample(Rng& rng) const;
  // P(X <= t), the empirical CDF.
  double Cdf(Duration t) const;

 private:
  std::shared_ptr<const void> owner_;  // what the spans point into
  std::span<const int64_t> samples_us_;
  std::span<const int64_t> sorted_us_;
  int64_t mean_us_ = 0;
};

}  // namespace sloserve

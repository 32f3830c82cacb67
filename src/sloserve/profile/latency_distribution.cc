#include "sloserve/profile/latency_distribution.h"

#include <algorithm>
#include <cmath>

namespace sloserve {

LatencyDistribution::LatencyDistribution(std::vector<int64_t> samples_us)
    : samples_us_(std::move(samples_us)), sorted_us_(samples_us_) {
  std::sort(sorted_us_.begin(), sorted_us_.end());
  if (sorted_us_.empty()) return;
  // Sum in long double: 10^6 samples of 10^7 us fit exactly, and the mean rounds once.
  long double sum = 0;
  for (int64_t s : sorted_us_) sum += static_cast<long double>(s);
  mean_us_ = static_cast<int64_t>(std::llround(sum / static_cast<long double>(sorted_us_.size())));
}

Duration LatencyDistribution::Quantile(double q) const {
  if (sorted_us_.empty()) return Duration(0);
  q = std::clamp(q, 0.0, 1.0);
  // numpy's default ("linear"): position h = (n-1)q between order statistics.
  const double h = static_cast<double>(sorted_us_.size() - 1) * q;
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted_us_.size()) return Duration(sorted_us_.back());
  const double frac = h - static_cast<double>(lo);
  const double lo_v = static_cast<double>(sorted_us_[lo]);
  const double hi_v = static_cast<double>(sorted_us_[lo + 1]);
  return Duration(std::llround(lo_v + frac * (hi_v - lo_v)));
}

Duration LatencyDistribution::Sample(Rng& rng) const {
  if (sorted_us_.empty()) return Duration(0);
  // Uniform01 < 1, so the index stays below size() (no modulo bias either).
  size_t i = static_cast<size_t>(Uniform01(rng) * static_cast<double>(sorted_us_.size()));
  i = std::min(i, sorted_us_.size() - 1);
  return Duration(sorted_us_[i]);
}

double LatencyDistribution::Cdf(Duration t) const {
  if (sorted_us_.empty()) return 0.0;
  auto it = std::upper_bound(sorted_us_.begin(), sorted_us_.end(), t.count());
  return static_cast<double>(it - sorted_us_.begin()) / static_cast<double>(sorted_us_.size());
}

}  // namespace sloserve

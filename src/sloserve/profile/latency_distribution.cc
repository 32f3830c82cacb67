#include "sloserve/profile/latency_distribution.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <utility>

namespace sloserve {
namespace {

// Sorts non-negative samples below 2^33 by LSD radix, 11 bits a pass; anything else (short
// lists, negative or huge values) by std::sort. Integers have one sorted order, so both give
// the same result; the radix sort is ~4x faster on profile-sized lists (suite loading, issue 15).
void SortSamples(std::vector<int64_t>& v, int64_t min_us, int64_t max_us) {
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  if (v.size() < 256 || min_us < 0 || max_us >= (int64_t{1} << (3 * kBits))) {
    std::sort(v.begin(), v.end());
    return;
  }
  // One scratch buffer per thread, reused across lists: a fresh one per list cost a memset
  // and new pages for every list of a suite.
  thread_local std::vector<int64_t> scratch;
  if (scratch.size() < v.size()) scratch.resize(v.size());
  int64_t* src = v.data();
  int64_t* dst = scratch.data();
  const size_t n = v.size();
  std::vector<size_t> count(kBuckets);
  for (int shift = 0; (max_us >> shift) != 0; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (size_t i = 0; i < n; ++i) ++count[static_cast<size_t>(src[i] >> shift) & (kBuckets - 1)];
    size_t pos = 0;
    for (size_t& c : count) pos += std::exchange(c, pos);
    for (size_t i = 0; i < n; ++i) {
      dst[count[static_cast<size_t>(src[i] >> shift) & (kBuckets - 1)]++] = src[i];
    }
    std::swap(src, dst);
  }
  if (src != v.data()) std::copy(src, src + n, v.data());  // an odd number of passes
}

}  // namespace

LatencyDistribution::LatencyDistribution(std::vector<int64_t> samples_us) {
  if (samples_us.empty()) return;
  int64_t min_us = INT64_MAX, max_us = INT64_MIN;
  for (int64_t s : samples_us) {
    min_us = std::min(min_us, s);
    max_us = std::max(max_us, s);
  }
  // A list already sorted is stored once (both spans view it).
  struct Owned {
    std::vector<int64_t> samples, sorted;
  };
  auto owned = std::make_shared<Owned>();
  owned->samples = std::move(samples_us);
  if (!std::is_sorted(owned->samples.begin(), owned->samples.end())) {
    owned->sorted = owned->samples;
    SortSamples(owned->sorted, min_us, max_us);
  }
  samples_us_ = owned->samples;
  sorted_us_ = owned->sorted.empty() ? samples_us_ : std::span<const int64_t>(owned->sorted);
  owner_ = std::move(owned);
  // The mean rounds once from the exact sum: in int64 when it cannot overflow (then the
  // long double conversion is exact too), else in long double (exact up to 2^64).
  const auto n = static_cast<long double>(sorted_us_.size());
  long double sum = 0;
  if (min_us >= 0 && max_us <= INT64_MAX / static_cast<int64_t>(sorted_us_.size())) {
    int64_t isum = 0;
    for (int64_t s : sorted_us_) isum += s;
    sum = static_cast<long double>(isum);
  } else {
    for (int64_t s : sorted_us_) sum += static_cast<long double>(s);
  }
  mean_us_ = static_cast<int64_t>(std::llround(sum / n));
}

LatencyDistribution LatencyDistribution::FromStored(std::span<const int64_t> samples,
                                                    std::span<const int64_t> sorted,
                                                    int64_t mean_us,
                                                    std::shared_ptr<const void> owner) {
  LatencyDistribution d;
  d.owner_ = std::move(owner);
  d.samples_us_ = samples;
  d.sorted_us_ = sorted;
  d.mean_us_ = mean_us;
  return d;
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

#include "sloserve/engine/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace sloserve {
namespace {
constexpr int64_t kExact = 2048;              // exact buckets for [0, kExact) µs
constexpr double kGrowth = 1.0 + 1.0 / 1024;  // log bucket ratio
const double kLogGrowth = std::log(kGrowth);
constexpr size_t kLogBuckets = 22000;  // reaches ~1e12 µs
}  // namespace

LatencyHistogram::LatencyHistogram()
    : counts_(kExact + kLogBuckets, 0), block_counts_((counts_.size() + kBlock - 1) / kBlock, 0) {}

size_t LatencyHistogram::Bucket(int64_t us) {
  if (us < kExact) return static_cast<size_t>(std::max<int64_t>(us, 0));
  size_t k = static_cast<size_t>(std::log(static_cast<double>(us) / kExact) / kLogGrowth);
  return kExact + std::min(k, kLogBuckets - 1);
}

double LatencyHistogram::Representative(size_t bucket) {
  if (bucket < static_cast<size_t>(kExact)) return static_cast<double>(bucket);
  double lo = kExact * std::pow(kGrowth, static_cast<double>(bucket - kExact));
  return lo * std::sqrt(kGrowth);  // geometric middle of [lo, lo * growth)
}

void LatencyHistogram::Add(int64_t us) {
  const size_t b = Bucket(us);
  ++counts_[b];
  ++block_counts_[b / kBlock];
  ++count_;
  max_ = std::max(max_, us);
}

double LatencyHistogram::OrderStatistic(int64_t k) const {
  int64_t seen = 0;
  size_t block = 0;
  while (block < block_counts_.size() && seen + block_counts_[block] <= k) {
    seen += block_counts_[block++];
  }
  const size_t end = std::min(counts_.size(), (block + 1) * kBlock);
  for (size_t b = block * kBlock; b < end; ++b) {
    seen += counts_[b];
    if (seen > k) return std::min(Representative(b), static_cast<double>(max_));
  }
  return static_cast<double>(max_);
}

double LatencyHistogram::QuantileUs(double q) const {
  if (count_ == 0) return 0;
  double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(count_ - 1);
  int64_t lo = static_cast<int64_t>(std::floor(pos));
  double a = OrderStatistic(lo);
  if (lo + 1 >= count_) return a;
  double b = OrderStatistic(lo + 1);
  return a + (b - a) * (pos - static_cast<double>(lo));
}

}  // namespace sloserve

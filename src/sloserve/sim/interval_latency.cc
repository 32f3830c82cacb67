#include "sloserve/sim/interval_latency.h"

#include <algorithm>
#include <cmath>

namespace sloserve {

void IntervalLatencies::Add(const QueryRecord& r) {
  if (r.dropped) return;
  const int64_t us = r.arrival.time_since_epoch().count();
  const size_t i = us <= 0 ? 0 : static_cast<size_t>(us / interval_.count());
  if (i >= latencies_us_.size()) latencies_us_.resize(i + 1);
  latencies_us_[i].push_back(r.latency().count());
}

std::vector<double> IntervalLatencies::QuantileMs(double q, size_t n) const {
  std::vector<double> out(n, 0.0);
  std::vector<int64_t> v;
  for (size_t i = 0; i < n && i < latencies_us_.size(); ++i) {
    if (latencies_us_[i].empty()) continue;
    v = latencies_us_[i];
    const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
    const double a = static_cast<double>(v[lo]);
    double b = a;
    if (lo + 1 < v.size()) {
      // The next order statistic is the smallest of the elements after lo.
      b = static_cast<double>(
          *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end()));
    }
    out[i] = (a + (b - a) * (pos - static_cast<double>(lo))) * 1e-3;
  }
  return out;
}

}  // namespace sloserve

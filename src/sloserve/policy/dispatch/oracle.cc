#include "sloserve/policy/dispatch/oracle.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace sloserve {

StatusOr<OracleResult> OracleThroughput(const LatencyPredictor& predictor, VariantId variant,
                                        const std::vector<std::pair<HardwareId, int>>& mix,
                                        Duration qos, int largest_query, std::vector<int> sizes) {
  if (mix.empty()) return InvalidArgumentError("oracle: empty configuration");
  if (sizes.empty()) return InvalidArgumentError("oracle: no queries");
  HardwareId base = mix[0].first;
  Duration best = Duration::max();
  for (const auto& [hw, count] : mix) {
    if (count < 0) return InvalidArgumentError("oracle: negative instance count");
    if (count == 0) continue;
    const Duration l = predictor.Predict(hw, variant, largest_query);
    if (l < best) {
      best = l;
      base = hw;
    }
  }
  std::sort(sizes.begin(), sizes.end());
  size_t lo = 0, hi = sizes.size();  // remaining queries: sizes[lo, hi)
  // (free time, instance index); instances are (hardware) entries.
  using Slot = std::pair<int64_t, size_t>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> free;
  std::vector<HardwareId> type;
  for (const auto& [hw, count] : mix) {
    for (int k = 0; k < count; ++k) {
      free.push({0, type.size()});
      type.push_back(hw);
    }
  }
  OracleResult r;
  int64_t makespan = 0;
  while (lo < hi && !free.empty()) {
    auto [t, idx] = free.top();
    free.pop();
    const HardwareId hw = type[idx];
    if (hw == base) {
      const int size = sizes[--hi];
      const Duration l = predictor.Predict(hw, variant, size);
      if (l > qos) {  // nothing serves it within QoS
        ++r.skipped;
        free.push({t, idx});
        continue;
      }
      ++r.served;
      free.push({t + l.count(), idx});
      makespan = std::max(makespan, t + l.count());
    } else {
      const int size = sizes[lo];
      const Duration l = predictor.Predict(hw, variant, size);
      if (l > qos) continue;  // cannot serve even the smallest: retires
      ++lo;
      ++r.served;
      free.push({t + l.count(), idx});
      makespan = std::max(makespan, t + l.count());
    }
  }
  r.skipped += static_cast<int64_t>(hi - lo);  // left when no instance could take them
  r.makespan_s = static_cast<double>(makespan) / 1e6;
  r.qps = r.makespan_s > 0 ? static_cast<double>(r.served) / r.makespan_s : 0;
  return r;
}

}  // namespace sloserve

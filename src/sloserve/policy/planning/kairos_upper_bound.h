#pragma once
// Kairos' throughput upper bound of a heterogeneous configuration (HPDC'23, section 5.2,
// Eqs. 9-15): the most queries per second the configuration could serve within QoS if
// queries never waited and instances never idled, computed from latency profiles and
// an observed sample of query sizes, without simulating or deploying anything.
//
// Terms (for the query-size sample, latencies = profile mean service times):
//   base type b   lowest latency for the largest query (Definition 1), serves any size
//   s_i           first size at which auxiliary type i misses QoS; queries below it are
//                 "small" for i
//   s, f          s = max s_i over the auxiliary types present, f = share of sizes < s
//                 (Kairos gives every auxiliary type the largest region: optimistic)
//   Q_a^i         standalone throughput of type i on the small queries (< s)
//   Q_b, Q_b^{s+} base throughput on all queries / on the large ones (>= s)
// With u base instances and v_i of auxiliary type i, C = sum_i v_i Q_a^i (1 - f) / f
// (Eq. 14), and (Eq. 15)
//   QPS_max = u Q_b^{s+} / (1 - f)                                  if u Q_b^{s+} < C
//           = sum_i v_i Q_a^i / f + (u Q_b^{s+} - C) / (u Q_b^{s+}) u Q_b   otherwise.
// Edge cases: no auxiliary instance (or f = 0) gives u Q_b; f = 1 (every query small)
// gives sum_i v_i Q_a^i + u Q_b; no base instance with f < 1 gives 0 (the large queries
// have nowhere to go). Sizes the base type cannot serve within QoS are left out of the
// sample (nothing can serve them; unservable_fraction() reports their share).
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/policy/latency_learning/latency_predictor.h"
#include "sloserve/policy/planning/instance_configs.h"

namespace sloserve {

class KairosUpperBound {
 public:
  struct TypeSummary {
    HardwareId hardware = 0;
    bool base = false;
    int violation_size = 0;     // s_i: first sampled size over QoS (0: none is)
    double small_fraction = 1;  // f_i
    double qps_small = 0;       // standalone QPS on its own small queries
    double qps_all = 0;         // standalone QPS on every (servable) query
  };

  // `predictor` gives point latencies (profile mean); `sizes` is the observed query-size
  // sample (e.g. the last 10,000 queries). Errors: empty sample, a QoS no type meets
  // for any sampled size.
  static StatusOr<KairosUpperBound> Create(const LatencyPredictor& predictor,
                                           const ProfileSuite& suite, VariantId variant,
                                           Duration qos, std::vector<int> sizes);

  // Eq. 15 for one configuration (counts by HardwareId). O(types).
  double Bound(const InstanceCounts& counts) const;

  HardwareId base() const { return base_; }
  double unservable_fraction() const { return unservable_fraction_; }
  // Largest sampled size the base type cannot serve within QoS (0 if none).
  int smallest_unservable_size() const { return smallest_unservable_; }
  const std::vector<TypeSummary>& types() const { return types_; }

 private:
  // Mean latency (seconds) of type `hw` over sorted sizes [lo, hi).
  double MeanSeconds(HardwareId hw, size_t lo, size_t hi) const;
  // Index of the first sorted size >= `size`.
  size_t SplitAt(int size) const;

  HardwareId base_ = 0;
  std::vector<int> sizes_;                   // servable sizes, ascending
  std::vector<std::vector<double>> prefix_;  // [hw][k]: sum of latency of sizes_[0, k)
  std::vector<TypeSummary> types_;           // by HardwareId
  double unservable_fraction_ = 0;
  int smallest_unservable_ = 0;
};

}  // namespace sloserve

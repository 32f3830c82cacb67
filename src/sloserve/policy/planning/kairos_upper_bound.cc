#include "sloserve/policy/planning/kairos_upper_bound.h"

#include <algorithm>
#include <sstream>

namespace sloserve {

StatusOr<KairosUpperBound> KairosUpperBound::Create(const LatencyPredictor& predictor,
                                                    const ProfileSuite& suite, VariantId variant,
                                                    Duration qos, std::vector<int> sizes) {
  if (sizes.empty()) return InvalidArgumentError("upper bound: empty query-size sample");
  if (qos.count() <= 0) return InvalidArgumentError("upper bound: QoS target must be > 0");
  const size_t types = suite.hardware().size();
  if (types == 0) return InvalidArgumentError("upper bound: the suite has no hardware types");
  std::sort(sizes.begin(), sizes.end());
  KairosUpperBound ub;
  // Definition 1: the base type has the lowest latency for the largest query.
  Duration best = Duration::max();
  for (HardwareId hw = 0; hw < types; ++hw) {
    const Duration l = predictor.Predict(hw, variant, sizes.back());
    if (l < best) {
      best = l;
      ub.base_ = hw;
    }
  }
  // Sizes the base cannot serve within QoS: no type can (the base is fastest at the
  // largest size; at smaller sizes check the base itself, which is what serves them).
  std::vector<int> servable;
  servable.reserve(sizes.size());
  for (int s : sizes) {
    if (predictor.Predict(ub.base_, variant, s) <= qos) {
      servable.push_back(s);
    } else if (ub.smallest_unservable_ == 0 || s < ub.smallest_unservable_) {
      ub.smallest_unservable_ = s;
    }
  }
  ub.unservable_fraction_ = 1.0 - static_cast<double>(servable.size()) / sizes.size();
  if (servable.empty()) {
    std::ostringstream m;
    m << "QoS " << ToMillis(qos) << " ms is met by no hardware type for any sampled query size"
      << " (smallest size " << sizes.front() << " takes "
      << ToMillis(predictor.Predict(ub.base_, variant, sizes.front())) << " ms on "
      << suite.hardware()[ub.base_].name << ")";
    return InvalidArgumentError(m.str());
  }
  ub.sizes_ = std::move(servable);
  const size_t n = ub.sizes_.size();
  ub.prefix_.assign(types, std::vector<double>(n + 1, 0.0));
  ub.types_.resize(types);
  for (HardwareId hw = 0; hw < types; ++hw) {
    TypeSummary& t = ub.types_[hw];
    t.hardware = hw;
    t.base = hw == ub.base_;
    size_t first_violation = n;
    for (size_t k = 0; k < n; ++k) {
      const Duration l = predictor.Predict(hw, variant, ub.sizes_[k]);
      ub.prefix_[hw][k + 1] = ub.prefix_[hw][k] + ToSeconds(l);
      if (first_violation == n && l > qos) first_violation = k;
    }
    if (t.base) first_violation = n;  // the base serves every servable size
    t.violation_size = first_violation < n ? ub.sizes_[first_violation] : 0;
    t.small_fraction = static_cast<double>(first_violation) / n;
    const double mean_small = ub.MeanSeconds(hw, 0, first_violation);
    t.qps_small = mean_small > 0 ? 1.0 / mean_small : 0;
    const double mean_all = ub.MeanSeconds(hw, 0, n);
    t.qps_all = mean_all > 0 ? 1.0 / mean_all : 0;
  }
  return ub;
}

double KairosUpperBound::MeanSeconds(HardwareId hw, size_t lo, size_t hi) const {
  if (hi <= lo) return 0;
  return (prefix_[hw][hi] - prefix_[hw][lo]) / static_cast<double>(hi - lo);
}

size_t KairosUpperBound::SplitAt(int size) const {
  return static_cast<size_t>(std::lower_bound(sizes_.begin(), sizes_.end(), size) - sizes_.begin());
}

double KairosUpperBound::Bound(const InstanceCounts& counts) const {
  const size_t n = sizes_.size();
  const double u = base_ < counts.size() ? counts[base_] : 0;
  const double q_b = types_[base_].qps_all;
  // s: the largest small-query region among the auxiliary types present.
  size_t split = 0;
  bool any_aux = false;
  for (size_t hw = 0; hw < counts.size() && hw < types_.size(); ++hw) {
    if (hw == base_ || counts[hw] <= 0) continue;
    any_aux = true;
    const TypeSummary& t = types_[hw];
    split = std::max(split, t.violation_size == 0 ? n : SplitAt(t.violation_size));
  }
  if (!any_aux || split == 0) return u * q_b;
  const double f = static_cast<double>(split) / n;
  double aux_qps = 0;  // sum_i v_i Q_a^i over the small queries (< s)
  for (size_t hw = 0; hw < counts.size() && hw < types_.size(); ++hw) {
    if (hw == base_ || counts[hw] <= 0) continue;
    const double mean = MeanSeconds(hw, 0, split);
    if (mean > 0) aux_qps += counts[hw] / mean;
  }
  if (split == n) return aux_qps + u * q_b;  // no large queries: both serve everything
  if (u <= 0) return 0;                      // large queries have nowhere to go
  const double mean_large = MeanSeconds(base_, split, n);
  const double base_large = u / mean_large;  // u Q_b^{s+}
  const double c = aux_qps * (1 - f) / f;    // Eq. 14
  if (base_large < c) return base_large / (1 - f);
  return aux_qps / f + (base_large - c) / base_large * u * q_b;
}

}  // namespace sloserve

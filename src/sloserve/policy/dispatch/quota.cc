#include "sloserve/policy/dispatch/quota.h"

namespace sloserve {

StatusOr<std::unique_ptr<DispatchPolicy>> QuotaDispatch::Create(const PolicyParams&) {
  return std::unique_ptr<DispatchPolicy>(new QuotaDispatch());
}

void QuotaDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                           TimePoint, std::vector<Assignment>* out) {
  const size_t n = workers.size();
  if (n == 0) return;
  bool changed = weights_.size() != n;
  weights_.resize(n, 0.0);
  double total = 0;
  size_t any_active = n;
  for (size_t w = 0; w < n; ++w) {
    const double q = workers[w].active && workers[w].quota > 0 ? workers[w].quota : 0.0;
    if (q != weights_[w]) changed = true;
    weights_[w] = q;
    total += q;
    if (workers[w].active && any_active == n) any_active = w;
  }
  if (any_active == n) return;  // no active worker: queries stay central
  if (changed) credit_.assign(n, 0.0);
  for (size_t i = 0; i < pending.size(); ++i) {
    size_t pick = n;
    if (total > 0) {
      for (size_t w = 0; w < n; ++w) {
        if (weights_[w] <= 0) continue;
        credit_[w] += weights_[w];
        if (pick == n || credit_[w] > credit_[pick]) pick = w;
      }
      credit_[pick] -= total;
    } else {
      for (size_t tries = 0; tries < n; ++tries, ++next_) {
        if (next_ >= n) next_ = 0;
        if (workers[next_].active) break;
      }
      pick = next_++;
    }
    out->push_back({static_cast<uint32_t>(i), workers[pick].id});
  }
}

}  // namespace sloserve

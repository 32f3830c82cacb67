#pragma once
// Quota dispatch: arrivals spread over the active workers in proportion to their quotas
// (WorkerView::quota, set by a planning policy such as InfAdapter's, which sizes each
// quota within the worker's capacity). Smooth weighted round robin (as nginx's upstream
// balancer): each pick adds every worker's quota to its running credit, takes the worker
// with the most credit (ties: the lowest position) and charges it the quotas' sum. It is
// deterministic, and over any window each worker's share stays within one query of its
// quota share. Workers without a quota get nothing while any active worker has one;
// with no quota anywhere it is round robin. No options.
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class QuotaDispatch : public DispatchPolicy {
 public:
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

 private:
  // The credit of each worker position; reset whenever the quotas or the active set
  // change, so a new plan starts from an even footing.
  std::vector<double> credit_;
  std::vector<double> weights_;  // the quotas credit_ was built for (0: inactive)
  size_t next_ = 0;              // round robin without quotas
};

}  // namespace sloserve

#pragma once
// Join-shortest-queue dispatch: each arriving query goes at once to the worker with the
// fewest outstanding queries (queued + one if busy); ties go to the worker after the
// last one chosen, so equal workers share load evenly. On a multi-model pool only workers
// serving the query's model count (worker_eligibility.h). No options.
#include "sloserve/policy/dispatch/worker_eligibility.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class JoinShortestQueueDispatch : public DispatchPolicy {
 public:
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);
  Status Init(const PolicyContext& ctx) override;
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

 private:
  size_t last_ = 0;
  std::vector<size_t> extra_;  // queries assigned in this call, not yet in the views
  WorkerEligibility eligibility_;
};

}  // namespace sloserve

#pragma once
// Round-robin dispatch: each arriving query goes to the next worker in turn, at once
// (route-then-schedule topology). RAMSIS assumes this (section 4.4) and its simulator
// uses it. On a multi-model pool the turn skips workers that do not serve the query's
// model (worker_eligibility.h). No options.
#include "sloserve/policy/dispatch/worker_eligibility.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class RoundRobinDispatch : public DispatchPolicy {
 public:
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);
  Status Init(const PolicyContext& ctx) override;
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

 private:
  size_t next_ = 0;
  WorkerEligibility eligibility_;
};

}  // namespace sloserve

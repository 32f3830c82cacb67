#pragma once
// Central-queue dispatch: queries wait in the central queue (earliest deadline first)
// and an idle worker with an empty local queue takes up to `central_batch` of them at a
// time (the "workers grab from the central queue" topology of Clockwork-style
// controllers and of Jellyfish+). Options:
//   central_batch  queries handed to an idle worker at once (default 1).
// On a multi-model pool a worker takes the earliest queries of models it serves
// (worker_eligibility.h).
#include "sloserve/policy/dispatch/worker_eligibility.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class CentralQueueDispatch : public DispatchPolicy {
 public:
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);
  explicit CentralQueueDispatch(int max_batch) : max_batch_(max_batch) {}
  Status Init(const PolicyContext& ctx) override;
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

 private:
  int max_batch_;
  WorkerEligibility eligibility_;
  std::vector<uint8_t> taken_;  // per pending position, in this call
};

}  // namespace sloserve

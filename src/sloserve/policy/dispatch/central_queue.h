#pragma once
// Central-queue dispatch: queries wait in the central queue (earliest deadline first)
// and an idle worker with an empty local queue takes up to `central_batch` of them at a
// time (the "workers grab from the central queue" topology of Clockwork-style
// controllers and of Jellyfish+). Options:
//   central_batch  queries handed to an idle worker at once (default 1).
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class CentralQueueDispatch : public DispatchPolicy {
 public:
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);
  explicit CentralQueueDispatch(int max_batch) : max_batch_(max_batch) {}
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

 private:
  int max_batch_;
};

}  // namespace sloserve

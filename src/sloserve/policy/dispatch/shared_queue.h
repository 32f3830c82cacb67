#pragma once
// Shared-queue dispatch: queries never leave the central queue until a worker takes
// them; each idle worker, in turn, runs its batching policy directly on the central
// queue (earliest deadline first). This is how Jellyfish+ and ModelSwitching workers
// "eagerly grab and service queries from the central queue in batches" (RAMSIS
// section 7), and the natural topology for any controller that batches centrally.
// No options.
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class SharedQueueDispatch : public DispatchPolicy {
 public:
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams&) {
    return std::unique_ptr<DispatchPolicy>(new SharedQueueDispatch());
  }
  void Assign(const QueueView&, const std::vector<WorkerView>&, TimePoint,
              std::vector<Assignment>*) override {}
  bool shared_queue() const override { return true; }
};

}  // namespace sloserve

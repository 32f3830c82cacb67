#pragma once
// SLO-partitioned dispatch (RAMSIS appendix G): each query goes, round-robin, to a worker
// of its SLO class (per-SLO central queues, workers associated with the queue whose SLO
// matches). Options: slo_workers (required, e.g. "150:30,300:30"; see slo_classes.h).
#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/slo_classes.h"

namespace sloserve {

class SloPartitionDispatch : public DispatchPolicy {
 public:
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);
  explicit SloPartitionDispatch(std::string spec) : spec_(std::move(spec)) {}
  Status Init(const PolicyContext& ctx) override;
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

 private:
  std::string spec_;
  std::vector<SloClass> classes_;
  std::vector<size_t> next_;  // per class: offset of the next worker
};

}  // namespace sloserve

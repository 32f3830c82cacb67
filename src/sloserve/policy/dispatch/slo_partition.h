#pragma once
// SLO-partitioned dispatch (RAMSIS appendix G): each query goes, round-robin, to a worker
// of its SLO class (per-SLO central queues, workers associated with the queue whose SLO
// matches). Options: slo_workers (required, e.g. "150:30,300:30"; see slo_classes.h).
// Workers a plan adds after the start join the first class (as in ramsis selection). A
// query whose class has no active worker goes to an active worker of the nearest class
// that has one. On a multi-model pool only workers serving the query's model count
// (worker_eligibility.h).
#include "sloserve/policy/dispatch/worker_eligibility.h"
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
  // The next eligible worker for model `task` of class c in turn (advancing its turn), or
  // kNoId.
  WorkerId NextActive(size_t c, TaskId task, const std::vector<WorkerView>& workers);

  std::string spec_;
  std::vector<SloClass> classes_;
  std::vector<std::vector<WorkerId>> members_;  // per class: worker ids, in turn order
  std::vector<std::vector<size_t>> fallback_;   // per class: the others, nearest SLO first
  std::vector<size_t> next_;                    // per class: offset of the next worker
  std::vector<char> known_;                     // per worker id: in a class
  std::vector<size_t> position_;                // per worker id: position in the view
  WorkerEligibility eligibility_;
};

}  // namespace sloserve

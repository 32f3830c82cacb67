#pragma once
// Earliest-deadline-first batching with maximal batching: the next batch takes the
// earliest-deadline queries of the head query's task, as many as fit in the selected
// variant's largest batch (RAMSIS section 4.1 "maximal batching"; Clipper/Nexus use the
// same greedy rule with a fixed cap). The variant comes from the selection policy.
// Options:
//   drop_expired  drop queries already past their deadline instead of serving them late
//                 (default false: "late rather than never", as RAMSIS).
// Registered twice: "edf" (deadline order) and "fifo" (arrival order). A query with more
// rows than the selected variant's largest batch can never run: it is rejected (reported
// unservable), in both orders.
#include <memory>

#include "sloserve/policy/interfaces.h"

namespace sloserve {

class EdfBatching : public BatchingPolicy {
 public:
  struct Options {
    bool drop_expired = false;
    bool arrival_order = false;  // FIFO instead of EDF
  };
  static StatusOr<std::unique_ptr<BatchingPolicy>> Create(const PolicyParams& params,
                                                          std::unique_ptr<SelectionPolicy> sel,
                                                          bool fifo);

  EdfBatching(Options options, std::unique_ptr<SelectionPolicy> selection)
      : options_(options), selection_(std::move(selection)) {}
  Status Init(const PolicyContext& ctx) override { return selection_->Init(ctx); }
  void NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                 BatchDecision* out) override;
  void OnArrival(const Query& q, TimePoint now) override { selection_->OnArrival(q, now); }
  void OnWorkersChanged(const std::vector<WorkerView>& workers) override {
    selection_->OnWorkersChanged(workers);
  }

 private:
  Options options_;
  std::unique_ptr<SelectionPolicy> selection_;
  std::vector<uint32_t> scratch_;  // positions in arrival order (FIFO with mixed SLOs)
};

}  // namespace sloserve

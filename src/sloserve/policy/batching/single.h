#pragma once
// One query per batch, first come first served: the instance model of Kairos (HPDC'23,
// section 6: "only one query consisting of the batched requests is served by one model
// copy at a time") and of its baselines (Ribbon, DRS, CLKWRK). A query already carries
// its rows (Query::size); it is run alone on the variant the selection policy picks.
// The head is the earliest arrival (ties: id) of the worker's queue. A query with more
// rows than the selection's row cap can never run: it is rejected (unservable).
// Options: none of its own (the selection's `variant`, `max_batch` apply).
#include <memory>

#include "sloserve/policy/interfaces.h"

namespace sloserve {

class SingleBatching : public BatchingPolicy {
 public:
  static StatusOr<std::unique_ptr<BatchingPolicy>> Create(const PolicyParams& params,
                                                          std::unique_ptr<SelectionPolicy> sel);
  explicit SingleBatching(std::unique_ptr<SelectionPolicy> sel) : selection_(std::move(sel)) {}
  Status Init(const PolicyContext& ctx) override { return selection_->Init(ctx); }
  void NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                 BatchDecision* out) override;
  void OnArrival(const Query& q, TimePoint now) override { selection_->OnArrival(q, now); }
  void OnWorkersChanged(const std::vector<WorkerView>& workers) override {
    selection_->OnWorkersChanged(workers);
  }

 private:
  std::unique_ptr<SelectionPolicy> selection_;
};

}  // namespace sloserve

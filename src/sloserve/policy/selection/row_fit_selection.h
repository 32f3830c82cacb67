#pragma once
// Wraps every batching policy's selection (PolicyRegistry::MakeBatching) so the batch
// formed around a request holds all of its rows: a selection states the batch it wants
// (RAMSIS: 1 when the queue is short), which is not a limit on one request's rows
// (the Open Inference Protocol's batched requests, docs/protocol.md "Batched requests").
// A head of several rows gets the chosen variant if it takes them within the head's SLO,
// else the most accurate variant that does (RowCapacity::Fit). On a worker a plan pinned,
// the decision names the pinned variant, sized for it: the engine runs that variant.
#include <memory>

#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/selection/row_capacity.h"

namespace sloserve {

class RowFitSelection : public SelectionPolicy {
 public:
  explicit RowFitSelection(std::unique_ptr<SelectionPolicy> inner) : inner_(std::move(inner)) {}

  Status Init(const PolicyContext& ctx) override;
  SelectionDecision Choose(const WorkerView& worker, const QueueView& queue, const Query& head,
                           TimePoint now) override;
  void OnArrival(const Query& q, TimePoint now) override { inner_->OnArrival(q, now); }
  void OnWorkersChanged(const std::vector<WorkerView>& workers) override {
    inner_->OnWorkersChanged(workers);
  }
  bool follows_load() const override { return inner_->follows_load(); }

 private:
  std::unique_ptr<SelectionPolicy> inner_;
  RowCapacity capacity_;
};

}  // namespace sloserve

#pragma once
// Clipper-style batching (Crankshaw et al., "Clipper: A Low-Latency Online Prediction
// Serving System", NSDI'17, section 4.3 "Adaptive batching"), as characterised by ORLOJ
// section 2.3: reactive. Each worker's batch size cap follows AIMD on the *measured*
// latency of its previous batch: + `aimd_add` when it was within the latency objective
// (the SLO of its queries), x (1 - `aimd_decrease`) when it was not. Queries are served
// in queue order (FIFO under one SLO) and never dropped: late ones are served late.
// The measured latency is the worker's busy_until minus the launch time (the executor's
// own duration for the batch, exact in `sim`). Cap starts at 1, bounded by the
// selection's max rows.
// Options: aimd_add (default 1), aimd_decrease (0.1).
#include <memory>

#include "sloserve/policy/interfaces.h"

namespace sloserve {

class ClipperBatching : public BatchingPolicy {
 public:
  struct Options {
    double add = 1;
    double decrease = 0.1;
  };
  static StatusOr<std::unique_ptr<BatchingPolicy>> Create(const PolicyParams& params,
                                                          std::unique_ptr<SelectionPolicy> sel);
  ClipperBatching(Options o, std::unique_ptr<SelectionPolicy> sel)
      : options_(o), selection_(std::move(sel)) {}
  Status Init(const PolicyContext& ctx) override;
  void NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                 BatchDecision* out) override;
  void OnArrival(const Query& q, TimePoint now) override { selection_->OnArrival(q, now); }
  void OnWorkersChanged(const std::vector<WorkerView>& workers) override {
    selection_->OnWorkersChanged(workers);
  }
  double cap(WorkerId w) const { return w < state_.size() ? state_[w].cap : 1; }

 private:
  struct State {
    double cap = 1;
    bool pending = false;  // a launched batch not yet measured
    TimePoint launched{};
    Duration objective{};
  };
  Options options_;
  std::unique_ptr<SelectionPolicy> selection_;
  std::vector<State> state_;
};

}  // namespace sloserve

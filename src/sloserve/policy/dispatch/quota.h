#pragma once
// Quota dispatch: arrivals spread over the active workers in proportion to their quotas
// (WorkerView::quota, set by a planning policy such as InfAdapter's, which sizes each
// quota within the worker's capacity). Smooth weighted round robin (as nginx's upstream
// balancer): each pick adds every worker's quota to its running credit, takes the worker
// with the most credit (ties: the lowest position) and charges it the quotas' sum. It is
// deterministic, and over any window each worker's share stays within one query of its
// quota share. Workers without a quota get nothing while any active worker has one;
// with no quota anywhere it is round robin. No options.
//
// Multi-model pools (docs/composed.md, "Dispatch"): a query of model t goes only to the
// workers that serve t (worker_eligibility.h), in proportion to their quotas among those
// workers: a plan gives each model's workers quotas that sum to 1 per model (any positive
// scale works: shares are relative within the model). Each model has its own credits; a
// worker serving several models (undedicated) takes part in each with its one quota.
#include "sloserve/policy/dispatch/worker_eligibility.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class QuotaDispatch : public DispatchPolicy {
 public:
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);
  Status Init(const PolicyContext& ctx) override;
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

 private:
  // The smooth round robin over the workers of one model (every worker when uniform).
  struct Lane {
    // The credit of each worker position; reset whenever the quotas of its eligible
    // workers change, so a new plan starts from an even footing.
    std::vector<double> credit;
    std::vector<double> weights;  // the quotas credit was built for (0: not eligible)
    std::vector<uint8_t> eligible;
    double total = 0;
    bool any = false;     // some worker is eligible
    size_t next = 0;      // round robin without quotas
    uint64_t synced = 0;  // the Assign call it was last synced with the workers in
  };
  // Brings lane `l` of model `task` up to date with `workers` (once per Assign call).
  void Sync(Lane& l, TaskId task, const std::vector<WorkerView>& workers);
  // The worker position for the next query of `l`'s model; workers.size() if none.
  size_t Pick(Lane& l, const std::vector<WorkerView>& workers);

  WorkerEligibility eligibility_;
  std::vector<Lane> lanes_;  // by model (one lane when uniform)
  uint64_t call_ = 0;
};

}  // namespace sloserve

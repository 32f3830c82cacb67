#pragma once
// Rate-following planning: a reactive autoscaler over the configured worker pool. At
// each plan tick it keeps ceil(observed_qps x headroom / per_worker_qps) workers active
// (at least min_workers, at most the pool of workers not retired; the lowest ids) and
// deactivates the rest, which finish their queues but get no new queries. The plan names
// every worker of the pool (a WorkerPlan each, keeping its pin and quota); it never adds
// or removes workers. Cost then follows the active workers.
// Options:
//   per_worker_qps  sustainable queries/s of one worker (required, > 0)
//   headroom        over-provisioning factor (default 1.2)
//   min_workers     floor (default 1)
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class RatePlanning : public PlanningPolicy {
 public:
  struct Options {
    double per_worker_qps = 0;
    double headroom = 1.2;
    int min_workers = 1;
  };
  static StatusOr<std::unique_ptr<PlanningPolicy>> Create(const PolicyParams& params);
  explicit RatePlanning(Options o) : options_(o) {}
  void Plan(const PlanningInput& input, DeploymentPlan* out) override;

 private:
  Options options_;
};

}  // namespace sloserve

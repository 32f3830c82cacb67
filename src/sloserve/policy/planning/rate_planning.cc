#include "sloserve/policy/planning/rate_planning.h"

#include <algorithm>
#include <cmath>

namespace sloserve {
namespace rate_options {
const KeyDecl kPerWorkerQps{.name = "per_worker_qps",
                            .type = KeyType::kNumber,
                            .unit = "qps",
                            .min = 0,
                            .min_exclusive = true,
                            .help = "load one worker serves within the SLO; required"};
const KeyDecl kHeadroom{.name = "headroom",
                        .type = KeyType::kNumber,
                        .default_value = "1.2",
                        .min = 0,
                        .min_exclusive = true,
                        .help = "workers kept active = headroom x rate / per_worker_qps"};
const KeyDecl kMinWorkers{.name = "min_workers",
                          .type = KeyType::kInteger,
                          .default_value = "1",
                          .unit = "workers",
                          .min = 1,
                          .max = 2'147'483'647,
                          .help = "fewest workers kept active"};
}  // namespace rate_options

StatusOr<std::unique_ptr<PlanningPolicy>> RatePlanning::Create(const PolicyParams& p) {
  Options o;
  // The required option last: the registry learns the options by running this on none.
  ASSIGN_OR_RETURN(o.headroom, p.GetDouble(rate_options::kHeadroom));
  ASSIGN_OR_RETURN(int64_t min_workers, p.GetInt(rate_options::kMinWorkers));
  ASSIGN_OR_RETURN(o.per_worker_qps, p.GetDouble(rate_options::kPerWorkerQps));
  o.min_workers = static_cast<int>(min_workers);
  return std::unique_ptr<PlanningPolicy>(new RatePlanning(o));
}

void RatePlanning::Plan(const PlanningInput& input, DeploymentPlan* out) {
  // The pool: every worker not retired for good (this policy never adds or removes
  // workers, so with it alone that is every configured worker).
  const std::vector<WorkerView>& workers = *input.workers;
  size_t pool = 0;
  for (const WorkerView& w : workers) pool += w.phase != WorkerPhase::kRetired ? 1 : 0;
  double need = std::ceil(input.observed_qps * options_.headroom / options_.per_worker_qps);
  const double floor =
      std::min(static_cast<double>(options_.min_workers), static_cast<double>(pool));
  size_t n = static_cast<size_t>(std::clamp(need, floor, static_cast<double>(pool)));
  // The first n workers of the pool (in view order: the lowest ids) are active.
  out->change = true;
  out->workers.resize(pool);
  size_t k = 0;
  for (const WorkerView& w : workers) {
    if (w.phase == WorkerPhase::kRetired) continue;
    WorkerPlan& p = out->workers[k];
    p = WorkerPlan{};
    p.worker = w.id;
    p.active = k < n;
    // A plan entry sets the worker's pin and quota too: restate the current ones.
    p.pinned = w.pinned;
    p.quota = w.quota;
    ++k;
  }
}

}  // namespace sloserve

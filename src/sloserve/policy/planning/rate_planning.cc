#include "sloserve/policy/planning/rate_planning.h"

#include <algorithm>
#include <cmath>

namespace sloserve {

StatusOr<std::unique_ptr<PlanningPolicy>> RatePlanning::Create(const PolicyParams& p) {
  Options o;
  ASSIGN_OR_RETURN(o.per_worker_qps, p.GetDouble("per_worker_qps", 0));
  ASSIGN_OR_RETURN(o.headroom, p.GetDouble("headroom", 1.2));
  ASSIGN_OR_RETURN(int64_t min_workers, p.GetInt("min_workers", 1));
  if (o.per_worker_qps <= 0)
    return InvalidArgumentError("rate: option 'per_worker_qps' must be > 0");
  if (o.headroom <= 0) return InvalidArgumentError("rate: option 'headroom' must be > 0");
  if (min_workers < 1) return InvalidArgumentError("rate: option 'min_workers' must be >= 1");
  o.min_workers = static_cast<int>(min_workers);
  return std::unique_ptr<PlanningPolicy>(new RatePlanning(o));
}

void RatePlanning::Plan(const PlanningInput& input, DeploymentPlan* out) {
  const size_t pool = input.workers->size();
  double need = std::ceil(input.observed_qps * options_.headroom / options_.per_worker_qps);
  const double floor =
      std::min(static_cast<double>(options_.min_workers), static_cast<double>(pool));
  size_t n = static_cast<size_t>(std::clamp(need, floor, static_cast<double>(pool)));
  out->change = true;
  out->active.assign(pool, false);
  for (size_t i = 0; i < n; ++i) out->active[i] = true;
}

}  // namespace sloserve

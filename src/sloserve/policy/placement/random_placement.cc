#include "sloserve/policy/placement/random_placement.h"

namespace sloserve {

StatusOr<std::unique_ptr<PlacementPolicy>> RandomPlacement::Create(const PolicyParams&) {
  return std::unique_ptr<PlacementPolicy>(new RandomPlacement());
}

Status RandomPlacement::Init(const PolicyContext& ctx) {
  rng_ = MakeRng(ctx.seed, "placement/random");
  eligibility_.Init(ctx.suite);
  return OkStatus();
}

PlacementDecision RandomPlacement::Place(const Query& q, const std::vector<WorkerView>& workers,
                                         const std::vector<MachineView>&, TimePoint) {
  PlacementDecision d;
  size_t active = 0;
  for (const WorkerView& w : workers) active += eligibility_.Eligible(w, q.task) ? 1 : 0;
  if (active == 0) return d;
  size_t pick = static_cast<size_t>(Uniform01(rng_) * static_cast<double>(active));
  for (const WorkerView& w : workers) {
    if (!eligibility_.Eligible(w, q.task)) continue;
    if (pick-- == 0) {
      d.worker = w.id;
      break;
    }
  }
  return d;
}

}  // namespace sloserve

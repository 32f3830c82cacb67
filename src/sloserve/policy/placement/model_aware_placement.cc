#include "sloserve/policy/placement/model_aware_placement.h"

#include "sloserve/policy/common_options.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

StatusOr<std::unique_ptr<PlacementPolicy>> ModelAwarePlacement::Create(const PolicyParams& p) {
  ASSIGN_OR_RETURN(std::string variant, p.GetString(kWarmVariantOption));
  return std::unique_ptr<PlacementPolicy>(new ModelAwarePlacement(variant));
}

Status ModelAwarePlacement::Init(const PolicyContext& ctx) {
  if (!variant_name_.empty()) {
    auto v = ctx.suite->FindVariant(variant_name_);
    if (!v) return NotFoundError("model_aware: unknown variant '" + variant_name_ + "'");
    variant_ = *v;
  }
  eligibility_.Init(ctx.suite);
  task_variants_.assign(ctx.suite->tasks().size(), {});
  for (TaskId t = 0; t < ctx.suite->tasks().size(); ++t) {
    task_variants_[t] = ctx.suite->VariantsOfTask(t);
  }
  return OkStatus();
}

namespace {

// "Holds" for routing: the variant is ready, or already loading. A query sent to a
// worker whose load is under way waits for the rest of that load, which is never longer
// than the full cold start another worker would pay, and it starts no second load of
// the same model (colocation with queuing). It is also what the engine showed before
// loading was a state: residency flipped at the launch that paid the cold start.
// Unloading counts as absent: the worker is giving the memory back.
bool Holds(const WorkerView& w, VariantId v) {
  if (v >= w.residency.size()) return false;
  const Residency r = w.residency[v];
  return r == Residency::kReady || r == Residency::kLoading;
}

}  // namespace

// Never sets a prefetch. When no active worker holds the model, the query goes to the
// least loaded worker, which loads the variant its batch needs when it forms that batch;
// a prefetch on that same worker gains nothing (an idle worker starts the batch, and so
// the load, at once; a busy one would not take the prefetch before it is idle), and
// without `warm_variant` this policy does not know which variant the selection policy
// will run, so it could load the wrong one. Warming a second worker ahead of demand is a
// different policy (replication), which neither docs/policies/model_aware.md nor the
// model-aware scheduling work it follows describes.
PlacementDecision ModelAwarePlacement::Place(const Query& q, const std::vector<WorkerView>& workers,
                                             const std::vector<MachineView>&, TimePoint) {
  const size_t n = workers.size();
  WorkerId warm = kNoId, any = kNoId;
  size_t warm_load = 0, any_load = 0;
  ++rotate_;
  for (size_t k = 0; k < n; ++k) {
    const WorkerView& w = workers[(rotate_ + k) % n];
    if (!eligibility_.Eligible(w, q.task)) continue;
    size_t load = w.queue_length + (w.busy ? 1 : 0);
    bool holds = false;
    if (variant_ != kNoId) {
      holds = Holds(w, variant_);
    } else if (q.task < task_variants_.size()) {
      for (VariantId v : task_variants_[q.task]) holds = holds || Holds(w, v);
    }
    if (holds && (warm == kNoId || load < warm_load)) {
      warm = w.id;
      warm_load = load;
    }
    if (any == kNoId || load < any_load) {
      any = w.id;
      any_load = load;
    }
  }
  PlacementDecision d;
  d.worker = warm != kNoId ? warm : any;
  return d;
}

}  // namespace sloserve

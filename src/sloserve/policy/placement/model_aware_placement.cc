#include "sloserve/policy/placement/model_aware_placement.h"

#include "sloserve/profile/profile.h"

namespace sloserve {

StatusOr<std::unique_ptr<PlacementPolicy>> ModelAwarePlacement::Create(const PolicyParams& p) {
  ASSIGN_OR_RETURN(std::string variant, p.GetString("warm_variant", ""));
  return std::unique_ptr<PlacementPolicy>(new ModelAwarePlacement(variant));
}

Status ModelAwarePlacement::Init(const PolicyContext& ctx) {
  if (!variant_name_.empty()) {
    auto v = ctx.suite->FindVariant(variant_name_);
    if (!v) return NotFoundError("model_aware: unknown variant '" + variant_name_ + "'");
    variant_ = *v;
  }
  task_variants_.assign(ctx.suite->tasks().size(), {});
  for (TaskId t = 0; t < ctx.suite->tasks().size(); ++t) {
    task_variants_[t] = ctx.suite->VariantsOfTask(t);
  }
  return OkStatus();
}

WorkerId ModelAwarePlacement::Place(const Query& q, const std::vector<WorkerView>& workers,
                                    TimePoint) {
  const size_t n = workers.size();
  WorkerId warm = kNoId, any = kNoId;
  size_t warm_load = 0, any_load = 0;
  ++rotate_;
  for (size_t k = 0; k < n; ++k) {
    const WorkerView& w = workers[(rotate_ + k) % n];
    if (!w.active) continue;
    size_t load = w.queue_length + (w.busy ? 1 : 0);
    bool holds = false;
    if (variant_ != kNoId) {
      holds = w.loaded[variant_];
    } else if (q.task < task_variants_.size()) {
      for (VariantId v : task_variants_[q.task]) holds = holds || w.loaded[v];
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
  return warm != kNoId ? warm : any;
}

}  // namespace sloserve

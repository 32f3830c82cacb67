#include "sloserve/policy/dispatch/slo_partition.h"

namespace sloserve {

StatusOr<std::unique_ptr<DispatchPolicy>> SloPartitionDispatch::Create(const PolicyParams& p) {
  ASSIGN_OR_RETURN(std::string spec, p.GetString("slo_workers", ""));
  if (spec.empty()) return InvalidArgumentError("slo_partition: option 'slo_workers' is required");
  return std::unique_ptr<DispatchPolicy>(new SloPartitionDispatch(spec));
}

Status SloPartitionDispatch::Init(const PolicyContext& ctx) {
  ASSIGN_OR_RETURN(classes_, ParseSloClasses(spec_, ctx.workers.size()));
  next_.assign(classes_.size(), 0);
  return OkStatus();
}

void SloPartitionDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                                  TimePoint, std::vector<Assignment>* out) {
  for (size_t i = 0; i < pending.size(); ++i) {
    const size_t c = NearestSloClass(classes_, pending.at(i).slo());
    const SloClass& cls = classes_[c];
    // Next active worker of the class, in turn.
    for (size_t tries = 0; tries < cls.workers; ++tries) {
      size_t w = cls.first_worker + next_[c] % cls.workers;
      next_[c] = (next_[c] + 1) % cls.workers;
      if (workers[w].active || tries + 1 == cls.workers) {
        out->push_back({static_cast<uint32_t>(i), workers[w].id});
        break;
      }
    }
  }
}

}  // namespace sloserve

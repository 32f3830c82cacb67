#include "sloserve/policy/dispatch/ribbon.h"

#include <algorithm>

#include "sloserve/policy/common_options.h"

namespace sloserve {

StatusOr<std::unique_ptr<DispatchPolicy>> RibbonDispatch::Create(const PolicyParams& p) {
  ASSIGN_OR_RETURN(std::string variant, p.GetString(kVariantOption));
  return std::unique_ptr<DispatchPolicy>(new RibbonDispatch(std::move(variant)));
}

Status RibbonDispatch::Init(const PolicyContext& ctx) {
  return deployment_.Init(ctx, variant_).WithPrefix("ribbon: ");
}

void RibbonDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                            TimePoint, std::vector<Assignment>* out) {
  deployment_.Observe(workers);  // a plan may have added a hardware type
  deployment_.IdleFastestFirst(workers, &idle_);
  if (idle_.empty() || pending.empty()) return;
  if (!deployment_.eligibility.uniform()) {
    taken_.assign(pending.size(), 0);
    for (size_t j : idle_) {
      for (size_t i = 0; i < pending.size(); ++i) {
        if (taken_[i] || !deployment_.eligibility.Serves(workers[j], pending.at(i).task)) continue;
        taken_[i] = 1;
        out->push_back({static_cast<uint32_t>(i), workers[j].id});
        break;
      }
    }
    return;
  }
  const size_t k = std::min(idle_.size(), pending.size());
  for (size_t i = 0; i < k; ++i) out->push_back({static_cast<uint32_t>(i), workers[idle_[i]].id});
}

}  // namespace sloserve

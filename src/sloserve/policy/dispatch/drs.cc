#include "sloserve/policy/dispatch/drs.h"

#include <algorithm>

#include "sloserve/policy/common_options.h"

namespace sloserve {
namespace drs_options {
const KeyDecl kThreshold{.name = "drs_threshold",
                         .type = KeyType::kInteger,
                         .default_value = "100",
                         .unit = "rows",
                         .min = 0,
                         .max = 1e6,
                         .help =
                             "queries larger than this go to the base type, smaller to the "
                             "auxiliary"};
}  // namespace drs_options

StatusOr<std::unique_ptr<DispatchPolicy>> DrsDispatch::Create(const PolicyParams& p) {
  Options o;
  ASSIGN_OR_RETURN(int64_t t, p.GetInt(drs_options::kThreshold));
  o.threshold = static_cast<int>(t);
  ASSIGN_OR_RETURN(int64_t window, p.GetInt(kKairosWindowOption));
  o.window = static_cast<int>(window);
  ASSIGN_OR_RETURN(o.variant, p.GetString(kVariantOption));
  return std::unique_ptr<DispatchPolicy>(new DrsDispatch(std::move(o)));
}

Status DrsDispatch::Init(const PolicyContext& ctx) {
  RETURN_IF_ERROR(deployment_.Init(ctx, options_.variant).WithPrefix("drs: "));
  has_aux_ = deployment_.types.size() > 1;
  task_has_aux_.assign(deployment_.task_coefficient.size(), 0);
  for (size_t t = 0; t < deployment_.task_coefficient.size(); ++t) {
    int types = 0;
    for (double c : deployment_.task_coefficient[t]) types += c > 0 ? 1 : 0;
    task_has_aux_[t] = types > 1 ? 1 : 0;
  }
  return OkStatus();
}

void DrsDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                         TimePoint, std::vector<Assignment>* out) {
  deployment_.Observe(workers);  // a plan may have added a hardware type
  deployment_.IdleFastestFirst(workers, &idle_);
  if (idle_.empty() || pending.empty()) return;
  const bool uniform = deployment_.eligibility.uniform();
  // On a multi-model pool an instance's window is the first `window` queries it serves,
  // so queries of a model it cannot run do not hide the others.
  const size_t m =
      uniform ? std::min(pending.size(), static_cast<size_t>(options_.window)) : pending.size();
  taken_.assign(m, 0);
  for (size_t j : idle_) {
    const HardwareId hw = workers[j].hardware;
    const bool base = deployment_.IsBase(hw);
    size_t seen = 0;
    for (size_t i = 0; i < m; ++i) {
      const Query& q = pending.at(i);
      if (!uniform) {
        if (!deployment_.eligibility.Serves(workers[j], q.task)) continue;
        if (seen++ == static_cast<size_t>(options_.window)) break;
      }
      if (taken_[i]) continue;
      const bool large = q.size > options_.threshold;
      if (uniform) {
        // Without auxiliary instances every class goes to the base type.
        if (has_aux_ && large != base) continue;
      } else {
        const bool base_for = deployment_.CoefficientFor(q.task, hw) >= 1.0;
        if (q.task < task_has_aux_.size() && task_has_aux_[q.task] && large != base_for) continue;
      }
      taken_[i] = 1;
      out->push_back({static_cast<uint32_t>(i), workers[j].id});
      break;
    }
  }
}

}  // namespace sloserve

#include "sloserve/policy/dispatch/round_robin.h"

namespace sloserve {

StatusOr<std::unique_ptr<DispatchPolicy>> RoundRobinDispatch::Create(const PolicyParams&) {
  return std::unique_ptr<DispatchPolicy>(new RoundRobinDispatch());
}

Status RoundRobinDispatch::Init(const PolicyContext& ctx) {
  eligibility_.Init(ctx.suite);
  return OkStatus();
}

void RoundRobinDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                                TimePoint, std::vector<Assignment>* out) {
  if (workers.empty()) return;
  const bool uniform = eligibility_.uniform();
  for (size_t i = 0; i < pending.size(); ++i) {
    const TaskId task = uniform ? 0 : pending.at(i).task;
    // Next eligible worker in turn (planning may have retired some).
    bool found = false;
    for (size_t tries = 0; tries < workers.size() && !found; ++tries) {
      if (next_ >= workers.size()) next_ = 0;
      found = eligibility_.Eligible(workers[next_], task);
      if (!found) ++next_;
    }
    // No active worker (every remote worker down) or none serving the model: the query
    // stays central until one (re)joins or its deadline passes.
    if (!found) {
      if (uniform) return;
      continue;
    }
    out->push_back({static_cast<uint32_t>(i), workers[next_].id});
    ++next_;
  }
}

}  // namespace sloserve

#include "sloserve/policy/dispatch/round_robin.h"

namespace sloserve {

StatusOr<std::unique_ptr<DispatchPolicy>> RoundRobinDispatch::Create(const PolicyParams&) {
  return std::unique_ptr<DispatchPolicy>(new RoundRobinDispatch());
}

void RoundRobinDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                                TimePoint, std::vector<Assignment>* out) {
  if (workers.empty()) return;
  for (size_t i = 0; i < pending.size(); ++i) {
    // Next active worker in turn (planning may have retired some).
    bool found = false;
    for (size_t tries = 0; tries < workers.size() && !found; ++tries) {
      if (next_ >= workers.size()) next_ = 0;
      found = workers[next_].active;
      if (!found) ++next_;
    }
    // No active worker (every remote worker down): the queries stay central until one
    // rejoins or their deadline passes.
    if (!found) return;
    out->push_back({static_cast<uint32_t>(i), workers[next_].id});
    ++next_;
  }
}

}  // namespace sloserve

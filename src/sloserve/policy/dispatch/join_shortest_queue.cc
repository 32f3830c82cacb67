#include "sloserve/policy/dispatch/join_shortest_queue.h"

namespace sloserve {

StatusOr<std::unique_ptr<DispatchPolicy>> JoinShortestQueueDispatch::Create(const PolicyParams&) {
  return std::unique_ptr<DispatchPolicy>(new JoinShortestQueueDispatch());
}

Status JoinShortestQueueDispatch::Init(const PolicyContext& ctx) {
  eligibility_.Init(ctx.suite);
  return OkStatus();
}

void JoinShortestQueueDispatch::Assign(const QueueView& pending,
                                       const std::vector<WorkerView>& workers, TimePoint,
                                       std::vector<Assignment>* out) {
  const size_t n = workers.size();
  if (n == 0) return;
  extra_.assign(n, 0);
  const bool uniform = eligibility_.uniform();
  for (size_t i = 0; i < pending.size(); ++i) {
    const TaskId task = uniform ? 0 : pending.at(i).task;
    size_t best = n;
    size_t best_load = 0;
    // Workers in turn from the one after the last chosen (ties go to the earliest in
    // that order); two plain ranges rather than `% n` per worker, which dominated.
    auto scan = [&](size_t from, size_t to) {
      for (size_t w = from; w < to; ++w) {
        const WorkerView& v = workers[w];
        if (!eligibility_.Eligible(v, task)) continue;
        const size_t load = v.queue_length + (v.busy ? 1 : 0) + extra_[w];
        if (best == n || load < best_load) {
          best = w;
          best_load = load;
        }
      }
    };
    const size_t start = (last_ + 1) % n;
    scan(start, n);
    scan(0, start);
    if (best == n) {  // no active worker (serving the model): stays central
      if (uniform) return;
      continue;
    }
    ++extra_[best];
    last_ = best;
    out->push_back({static_cast<uint32_t>(i), workers[best].id});
  }
}

}  // namespace sloserve

#include "sloserve/policy/dispatch/central_queue.h"

namespace sloserve {
namespace central_options {
const KeyDecl kCentralBatch{.name = "central_batch",
                            .type = KeyType::kInteger,
                            .default_value = "1",
                            .unit = "queries",
                            .min = 1,
                            .max = 2'147'483'647,
                            .help = "queries handed to an idle worker at once"};
}  // namespace central_options

StatusOr<std::unique_ptr<DispatchPolicy>> CentralQueueDispatch::Create(const PolicyParams& p) {
  ASSIGN_OR_RETURN(int64_t max_batch, p.GetInt(central_options::kCentralBatch));
  return std::unique_ptr<DispatchPolicy>(new CentralQueueDispatch(static_cast<int>(max_batch)));
}

Status CentralQueueDispatch::Init(const PolicyContext& ctx) {
  eligibility_.Init(ctx.suite);
  return OkStatus();
}

void CentralQueueDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                                  TimePoint, std::vector<Assignment>* out) {
  if (!eligibility_.uniform()) {
    // Each idle worker takes the earliest queries it serves that no other took.
    taken_.assign(pending.size(), 0);
    for (const WorkerView& w : workers) {
      if (!w.active || w.busy || w.queue_length > 0) continue;
      int given = 0;
      for (size_t i = 0; i < pending.size() && given < max_batch_; ++i) {
        if (taken_[i] || !eligibility_.Serves(w, pending.at(i).task)) continue;
        taken_[i] = 1;
        ++given;
        out->push_back({static_cast<uint32_t>(i), w.id});
      }
    }
    return;
  }
  size_t next = 0;  // pending is in deadline order: hand out from the front
  for (const WorkerView& w : workers) {
    if (next >= pending.size()) break;
    if (!w.active || w.busy || w.queue_length > 0) continue;
    for (int k = 0; k < max_batch_ && next < pending.size(); ++k) {
      out->push_back({static_cast<uint32_t>(next++), w.id});
    }
  }
}

}  // namespace sloserve

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

void CentralQueueDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                                  TimePoint, std::vector<Assignment>* out) {
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

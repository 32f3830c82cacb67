#include "sloserve/policy/batching/clipper.h"

#include <algorithm>
#include <cmath>

#include "sloserve/policy/batching/point_estimate.h"
#include "sloserve/policy/per_worker.h"

namespace sloserve {
namespace clipper_options {
const KeyDecl kAimdAdd{.name = "aimd_add",
                       .type = KeyType::kNumber,
                       .default_value = "1",
                       .unit = "rows",
                       .min = 0,
                       .max = 1000,
                       .min_exclusive = true,
                       .help = "additive increase of the batch cap per batch within the objective"};
// (0, 1): the declaration says (0, 1], Create refuses 1 (a factor of 1 never decreases).
const KeyDecl kAimdDecrease{.name = "aimd_decrease",
                            .type = KeyType::kNumber,
                            .default_value = "0.1",
                            .min = 0,
                            .max = 1,
                            .min_exclusive = true,
                            .help =
                                "multiplicative decrease factor of the cap when a batch "
                                "overran (< 1)"};
}  // namespace clipper_options

StatusOr<std::unique_ptr<BatchingPolicy>> ClipperBatching::Create(
    const PolicyParams& params, std::unique_ptr<SelectionPolicy> sel) {
  Options o;
  ASSIGN_OR_RETURN(o.add, params.GetDouble(clipper_options::kAimdAdd));
  ASSIGN_OR_RETURN(o.decrease, params.GetDouble(clipper_options::kAimdDecrease));
  if (!(o.decrease < 1)) {
    return InvalidArgumentError(
        "batching policy 'clipper': option 'aimd_decrease': must be in (0, 1) (got " +
        params.values().at("aimd_decrease") + ")");
  }
  if (!sel) return InvalidArgumentError("clipper batching needs a selection policy");
  return std::unique_ptr<BatchingPolicy>(new ClipperBatching(o, std::move(sel)));
}

Status ClipperBatching::Init(const PolicyContext& ctx) {
  state_.assign(ctx.workers.size(), State());  // grows as workers are added
  return selection_->Init(ctx);
}

void ClipperBatching::NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                                BatchDecision* out) {
  out->Clear();
  if (queue.empty()) return;
  State& s = PerWorker(state_, worker.id);  // a new worker starts at the initial cap
  if (s.pending && !worker.busy) {          // measure the previous batch
    const Duration measured = worker.busy_until - s.launched;
    if (measured <= s.objective) {
      s.cap += options_.add;
    } else {
      s.cap = std::max(1.0, std::floor(s.cap * (1 - options_.decrease)));
    }
    s.pending = false;
  }
  const Query& head = queue.front();
  std::optional<SelectionDecision> chosen = SelectForHead(*selection_, worker, queue, now, out);
  if (!chosen) return;
  const SelectionDecision sel = *chosen;
  s.cap = std::min(s.cap, static_cast<double>(sel.max_rows));
  const int cap = std::max(1, static_cast<int>(s.cap));
  int rows = 0;
  for (size_t i = 0; i < queue.size() && rows < cap; ++i) {
    const Query& q = queue.at(i);
    if (q.task != head.task) continue;
    if (q.size > sel.max_rows) {             // batched on its own as the head (RowFitSelection)
      if (i == 0) out->reject.push_back(0);  // the head it does not hold: unservable here
      continue;
    }
    if (rows > 0 && rows + q.size > cap) break;
    rows += q.size;
    out->take.push_back(static_cast<uint32_t>(i));
  }
  if (!out->take.empty()) {
    out->variant = sel.variant;
    out->kind = BatchDecision::Kind::kRun;
    s.pending = true;
    s.launched = now;
    s.objective = head.slo();
  }
}

}  // namespace sloserve

#include "sloserve/policy/dispatch/slo_partition.h"

#include <algorithm>

#include "sloserve/policy/common_options.h"
#include "sloserve/policy/per_worker.h"

namespace sloserve {

StatusOr<std::unique_ptr<DispatchPolicy>> SloPartitionDispatch::Create(const PolicyParams& p) {
  ASSIGN_OR_RETURN(std::string spec, p.GetString(kSloWorkersOption));
  if (spec.empty()) return InvalidArgumentError("slo_partition: option 'slo_workers' is required");
  return std::unique_ptr<DispatchPolicy>(new SloPartitionDispatch(spec));
}

Status SloPartitionDispatch::Init(const PolicyContext& ctx) {
  ASSIGN_OR_RETURN(classes_, ParseSloClasses(spec_, ctx.workers.size()));
  eligibility_.Init(ctx.suite);
  next_.assign(classes_.size(), 0);
  members_.assign(classes_.size(), {});
  known_.assign(ctx.workers.size(), 1);
  for (size_t c = 0; c < classes_.size(); ++c) {
    const SloClass& cls = classes_[c];
    for (size_t w = cls.first_worker; w < cls.first_worker + cls.workers; ++w) {
      members_[c].push_back(static_cast<WorkerId>(w));
    }
  }
  fallback_.assign(classes_.size(), {});
  for (size_t c = 0; c < classes_.size(); ++c) {
    auto distance = [&](size_t k) {
      const Duration a = classes_[c].slo, b = classes_[k].slo;
      return a > b ? a - b : b - a;
    };
    for (size_t k = 0; k < classes_.size(); ++k) {
      if (k != c) fallback_[c].push_back(k);
    }
    std::stable_sort(fallback_[c].begin(), fallback_[c].end(),
                     [&](size_t x, size_t y) { return distance(x) < distance(y); });
  }
  return OkStatus();
}

WorkerId SloPartitionDispatch::NextActive(size_t c, TaskId task,
                                          const std::vector<WorkerView>& workers) {
  const std::vector<WorkerId>& members = members_[c];
  for (size_t tries = 0; tries < members.size(); ++tries) {
    const WorkerId id = members[next_[c] % members.size()];
    next_[c] = (next_[c] + 1) % members.size();
    const size_t pos = id < position_.size() ? position_[id] : workers.size();
    if (pos < workers.size() && eligibility_.Eligible(workers[pos], task)) return id;
  }
  return kNoId;
}

void SloPartitionDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                                  TimePoint, std::vector<Assignment>* out) {
  if (pending.empty()) return;
  // Where each worker is in this view (ids need not be positions once workers come and
  // go), and class membership for workers added since the start: the first class.
  std::fill(position_.begin(), position_.end(), workers.size());
  for (size_t j = 0; j < workers.size(); ++j) {
    const WorkerId id = workers[j].id;
    if (id == kNoId) continue;
    if (position_.size() <= id) position_.resize(static_cast<size_t>(id) + 1, workers.size());
    position_[id] = j;
    char& known = PerWorker(known_, id);
    if (!known) {
      known = 1;
      members_[0].push_back(id);
    }
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    const Query& q = pending.at(i);
    const size_t c = NearestSloClass(classes_, q.slo());
    // Next active worker of the class, in turn; if the whole class is inactive, the
    // nearest class with an active worker serves it (the engine refuses assignments to
    // inactive workers, and waiting could strand it). No active worker at all: stays.
    WorkerId w = NextActive(c, q.task, workers);
    for (size_t k = 0; w == kNoId && k < fallback_[c].size(); ++k) {
      w = NextActive(fallback_[c][k], q.task, workers);
    }
    if (w != kNoId) out->push_back({static_cast<uint32_t>(i), w});
  }
}

}  // namespace sloserve

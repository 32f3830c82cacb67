#include "sloserve/policy/dispatch/quota.h"

namespace sloserve {

StatusOr<std::unique_ptr<DispatchPolicy>> QuotaDispatch::Create(const PolicyParams&) {
  return std::unique_ptr<DispatchPolicy>(new QuotaDispatch());
}

Status QuotaDispatch::Init(const PolicyContext& ctx) {
  eligibility_.Init(ctx.suite);
  lanes_.clear();
  return OkStatus();
}

void QuotaDispatch::Sync(Lane& l, TaskId task, const std::vector<WorkerView>& workers) {
  l.synced = call_;
  const size_t n = workers.size();
  bool changed = l.weights.size() != n;
  l.weights.resize(n, 0.0);
  l.eligible.resize(n, 0);
  l.total = 0;
  l.any = false;
  for (size_t w = 0; w < n; ++w) {
    const bool ok = eligibility_.Eligible(workers[w], task);
    const double q = ok && workers[w].quota > 0 ? workers[w].quota : 0.0;
    changed = changed || q != l.weights[w];
    l.weights[w] = q;
    l.eligible[w] = ok ? 1 : 0;
    l.total += q;
    l.any = l.any || ok;
  }
  if (changed) l.credit.assign(n, 0.0);
}

size_t QuotaDispatch::Pick(Lane& l, const std::vector<WorkerView>& workers) {
  const size_t n = workers.size();
  if (!l.any) return n;
  size_t pick = n;
  if (l.total > 0) {
    for (size_t w = 0; w < n; ++w) {
      if (l.weights[w] <= 0) continue;
      l.credit[w] += l.weights[w];
      if (pick == n || l.credit[w] > l.credit[pick]) pick = w;
    }
    l.credit[pick] -= l.total;
    return pick;
  }
  for (size_t tries = 0; tries < n; ++tries, ++l.next) {
    if (l.next >= n) l.next = 0;
    if (l.eligible[l.next]) break;
  }
  return l.next++;
}

void QuotaDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                           TimePoint, std::vector<Assignment>* out) {
  const size_t n = workers.size();
  if (n == 0) return;
  ++call_;
  const bool uniform = eligibility_.uniform();
  if (uniform) {  // one lane, synced at every call (a plan's change starts it afresh)
    if (lanes_.empty()) lanes_.resize(1);
    Sync(lanes_[0], 0, workers);
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    const TaskId task = uniform ? 0 : pending.at(i).task;
    if (lanes_.size() <= task) lanes_.resize(static_cast<size_t>(task) + 1);
    Lane& l = lanes_[task];
    if (l.synced != call_) Sync(l, task, workers);
    const size_t pick = Pick(l, workers);
    if (pick == n) {  // no active worker (serving the model): stays central
      if (uniform) return;
      continue;
    }
    out->push_back({static_cast<uint32_t>(i), workers[pick].id});
  }
}

}  // namespace sloserve

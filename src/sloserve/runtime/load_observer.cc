#include "sloserve/runtime/load_observer.h"

#include <utility>

namespace sloserve {

LoadObservingExecutor::LoadObservingExecutor(std::unique_ptr<WorkerExecutor> inner, size_t variants)
    : inner_(std::move(inner)) {
  MutexLock lock(mu_);
  by_variant_.resize(variants);
}

void LoadObservingExecutor::Attach(ResultSink* sink) {
  outer_ = sink;
  inner_->Attach(this);
}

Duration LoadObservingExecutor::Send(const WorkerAction& action) {
  if (const auto* load = std::get_if<LoadVariant>(&action)) {
    MutexLock lock(mu_);  // before Send: the executor may post the result from inside it
    loads_[load->id] = load->variant;
    pending_.fetch_add(1);
  }
  return inner_->Send(action);
}

void LoadObservingExecutor::PostAt(ActionResult&& result, TimePoint at) {
  Observe(result);
  outer_->PostAt(std::move(result), at);
}

void LoadObservingExecutor::Post(ActionResult result) {
  Observe(result);
  outer_->Post(std::move(result));
}

void LoadObservingExecutor::PostQuietly(ActionResult result) {
  Observe(result);
  outer_->PostQuietly(std::move(result));
}

void LoadObservingExecutor::PostReachability(WorkerId worker, bool reachable,
                                             std::optional<ActionResult> result) {
  {
    MutexLock lock(reach_mu_);
    if (worker >= unreachable_by_worker_.size()) unreachable_by_worker_.resize(worker + 1, false);
    // Unchanged when a lost action's result comes with the state as it is.
    if (unreachable_by_worker_[worker] == reachable) {
      unreachable_by_worker_[worker] = !reachable;
      unreachable_.fetch_add(reachable ? -1 : 1, std::memory_order_release);
    }
  }
  if (result) Observe(*result);
  outer_->PostReachability(worker, reachable, std::move(result));
}

void LoadObservingExecutor::Observe(const ActionResult& r) {
  if (pending_.load() == 0) return;  // batches pass without taking the lock
  MutexLock lock(mu_);
  const auto it = loads_.find(r.id);
  if (it == loads_.end()) return;
  if (it->second < by_variant_.size()) {
    VariantLoads& v = by_variant_[it->second];
    ++v.loads;
    if (r.status.ok()) {
      v.total += r.end - r.begin;
    } else {
      ++v.failed;
    }
  }
  loads_.erase(it);
  pending_.fetch_sub(1);
}

std::vector<LoadObservingExecutor::VariantLoads> LoadObservingExecutor::Snapshot() const {
  MutexLock lock(mu_);
  return by_variant_;
}

bool LoadObservingExecutor::Unreachable(WorkerId worker) const {
  MutexLock lock(reach_mu_);
  return worker < unreachable_by_worker_.size() && unreachable_by_worker_[worker];
}

}  // namespace sloserve

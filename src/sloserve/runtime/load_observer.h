#pragma once
// Cold starts per variant for /metrics: wraps the runtime's executor and measures each
// LoadVariant action it runs (count, failures, summed duration from the result's begin
// to end), passing every action and result through unchanged. The engine only counts
// cold starts in total; this says which variants were loaded and how long loads took.
// It also counts the workers the executor reports unreachable now
// (ResultSink::PostReachability: remote workers marked down), which the runtime's
// readiness and intake read on any thread without asking the engine thread.
//
// Thread-safety: Send runs on the engine thread, results may arrive from executor
// threads (ResultSink::Post); the pending-load map has its own mutex, touched only while
// a load is outstanding, and Snapshot() may be called from any thread. Reachability
// changes come from the executor's health thread or its reply path, in the order they
// happened (remote::WorkerHealth posts them under its lock); unreachable_workers() is one
// atomic load.
#include <atomic>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/engine/worker_protocol.h"

namespace sloserve {

class LoadObservingExecutor : public WorkerExecutor, private ResultSink {
 public:
  struct VariantLoads {
    int64_t loads = 0;   // LoadVariant results
    int64_t failed = 0;  // of which failed
    Duration total{};    // summed duration of the successful ones
  };

  LoadObservingExecutor(std::unique_ptr<WorkerExecutor> inner, size_t variants);
  // The inner executor goes first: results it posts while it goes pass through this one.
  ~LoadObservingExecutor() override { inner_.reset(); }

  ExecutorWait* TakeWait() override { return inner_->TakeWait(); }
  int vacant_workers() const override { return inner_->vacant_workers(); }
  void Attach(ResultSink* sink) override;
  Duration Send(const WorkerAction& action) override EXCLUDES(mu_);

  // By VariantId.
  std::vector<VariantLoads> Snapshot() const EXCLUDES(mu_);
  // Workers reported unreachable and not reported reachable since (any thread).
  int unreachable_workers() const { return unreachable_.load(std::memory_order_acquire); }
  // Whether `worker` is reported unreachable now (any thread; false when never reported).
  bool Unreachable(WorkerId worker) const EXCLUDES(reach_mu_);

 private:
  void PostAt(ActionResult&& result, TimePoint at) override;
  void Post(ActionResult result) override;
  void PostQuietly(ActionResult result) override;
  void StepOrWake() override { outer_->StepOrWake(); }
  void PostReachability(WorkerId worker, bool reachable,
                        std::optional<ActionResult> result) override;
  void Observe(const ActionResult& r) EXCLUDES(mu_);

  std::unique_ptr<WorkerExecutor> inner_;
  ResultSink* outer_ = nullptr;
  std::atomic<int64_t> pending_{0};  // loads sent, result not yet seen
  mutable Mutex mu_;
  std::unordered_map<ActionId, VariantId> loads_ GUARDED_BY(mu_);
  std::vector<VariantLoads> by_variant_ GUARDED_BY(mu_);
  mutable Mutex reach_mu_;
  std::vector<bool> unreachable_by_worker_ GUARDED_BY(reach_mu_);  // grown on demand
  std::atomic<int> unreachable_{0};  // its true entries; written under reach_mu_
};

}  // namespace sloserve

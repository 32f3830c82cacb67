#pragma once
// Drives a WorkerExecutor one action at a time: sends it and blocks until its result is
// posted. For the callers that measure or check an executor outside the engine (`profile
// measure`, tests/torch, bench/torch_bench.cc); the engine itself never blocks on one.
#include <deque>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/core/payload_store.h"
#include "sloserve/engine/worker_protocol.h"

namespace sloserve {

// Collects results posted from the executor's threads; Wait blocks for one by id.
class BlockingResultSink : public ResultSink {
 public:
  void PostAt(ActionResult&& r, TimePoint at) override;
  void Post(ActionResult r) override EXCLUDES(mu_);
  ActionResult Wait(ActionId id) EXCLUDES(mu_);

 private:
  Mutex mu_;
  CondVar cv_;
  std::deque<ActionResult> results_ GUARDED_BY(mu_);
};

class BlockingExecutorClient {
 public:
  // Attaches itself as `executor`'s sink; both must outlive it.
  BlockingExecutorClient(WorkerExecutor* executor, PayloadStore* payloads);

  // `expected`: the profile's load time the action carries (executors measure their own).
  ActionResult Load(WorkerId w, HardwareId hw, VariantId v, Duration expected = {});
  ActionResult Unload(WorkerId w, HardwareId hw, VariantId v);
  // One batch of one query per tensor set (its size = the first tensor's first dimension),
  // put into the payload store before and released after; the outputs stay in the store
  // (TakeOutput or Release them).
  ActionResult Run(WorkerId w, HardwareId hw, VariantId v, std::vector<TensorSet> inputs,
                   TimePoint latest_start = kTimeInfinite);
  // The tensors under an output handle, which is released.
  TensorSet TakeOutput(PayloadHandle h);

 private:
  WorkerExecutor* executor_;
  PayloadStore* payloads_;
  BlockingResultSink sink_;
  ActionId next_id_ = 1;
};

}  // namespace sloserve

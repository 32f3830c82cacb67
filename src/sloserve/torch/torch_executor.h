#pragma once
// The real executor: runs TorchScript variants from a model repository with LibTorch,
// behind the same worker protocol as the emulated ProfileExecutor (worker_protocol.h).
//
// Each worker is one thread with its own action queue, created at its first action.
// Intra-op threads: the worker's hardware cores (ProfileSuite hardware `cores`), set on
// that thread (LibTorch's OpenMP pool size is per calling thread). Inter-op threads:
// LibTorch has one process-wide inter-op pool that can be sized once; the models here
// never fork, so it is set to 1 at the first executor. When the workers' cores add up
// to more than the machine has, `warn` says so once (serve refuses such a deployment
// unless its config allows it: CheckCoreBudget).
//
//   LoadVariant    torch::jit::load, torch::jit::optimize_for_inference (freezes the
//                  module; oneDNN convolutions at every batch size) + `warmup_runs` forward
//                  calls on a one-row zero input, and two at each other batch size the
//                  profile has for the worker's hardware (TorchScript's first calls at a new
//                  shape are slow); begin/end bracket all, so end - begin is
//                  the measured cold start. The module's parameter and buffer bytes are
//                  accounted as resident on the worker until UnloadVariant.
//   RunBatch       stacks the queries' input tensors along the batch dimension, runs
//                  forward once, splits the output rows back per query and puts each
//                  query's output into the payload store. Any failure (bad input, an
//                  exception in the model, a full store) fails the whole batch with the
//                  message, and the worker goes on with its next action.
//   UnloadVariant  drops the module and its accounted bytes.
//
// Torch headers are included only by torch_executor.cc (they are costly to compile).
#include <functional>
#include <memory>
#include <string>

#include "sloserve/core/payload_store.h"
#include "sloserve/engine/clock.h"
#include "sloserve/engine/worker_protocol.h"
#include "sloserve/profile/profile.h"
#include "sloserve/torch/model_repository.h"

namespace sloserve {

struct TorchExecutorOptions {
  int machine_cores = 0;  // 0 = std::thread::hardware_concurrency()
  int warmup_runs = 3;    // forward calls after a load, before it is reported ready
  // Freeze each loaded module and rewrite it for inference (torch::jit::optimize_for_inference:
  // oneDNN convolutions at every batch size; without it one row of a CNN runs several times
  // slower than two, docs/torch.md). Off: the module runs as loaded (for comparisons).
  bool optimize_for_inference = true;
  // Where the oversubscription warning goes (default: stderr).
  std::function<void(const std::string&)> warn;
  // The driver's clock, for begin/end and RunBatch's start window. Default: a steady
  // clock started with the executor (serve builds the executor within microseconds of
  // its runtime's clock, so the window is off by that much at most).
  const Clock* clock = nullptr;
};

class TorchExecutor : public WorkerExecutor {
 public:
  // `repo`, `suite` and `payloads` must outlive the executor. Suite variants are matched
  // to repository variants by name; one missing from the repository fails its loads.
  TorchExecutor(const ModelRepository* repo, const ProfileSuite* suite, PayloadStore* payloads,
                TorchExecutorOptions options = {});
  // Finishes the actions already sent (posting their results), then joins the workers.
  ~TorchExecutor() override;

  Duration Send(const WorkerAction& action) override;
  // The runtime's clock replaces the executor's own (TorchExecutorOptions::clock), before
  // any action or Preload: the executor's begin/end and start-window check were on a
  // clock started tens of µs to milliseconds after the runtime's (issue 35).
  void UseClock(const Clock* clock) override;

  // Loads `variant` on `worker` before serving and returns its cold start, without a
  // result through the sink: for the variants the engine starts with as resident
  // (EngineRuntime preloads). Blocks until loaded; call before the runtime starts.
  StatusOr<Duration> Preload(WorkerId worker, HardwareId hardware, VariantId variant);

  // Bytes of the modules resident on `worker` now (thread-safe).
  int64_t ResidentBytes(WorkerId worker) const;
  // Cores of all workers started so far.
  int CoresInUse() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// OK when `total_cores` fits `machine_cores` (0 = this machine's); otherwise an error
// naming both, or, when `allow` is set, OK with a warning through `warn`.
Status CheckCoreBudget(int total_cores, int machine_cores, bool allow,
                       const std::function<void(const std::string&)>& warn);

}  // namespace sloserve

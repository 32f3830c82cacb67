#pragma once
// The engine's side of the executor boundary. The engine launches a batch and later
// receives Engine::OnBatchComplete(worker, batch, now) from whoever drives it (the
// simulator's event loop, or the real-time runtime). Simulated, emulated, LibTorch
// and remote executors all sit behind this one typed message.
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/query.h"
#include "sloserve/core/time.h"

namespace sloserve {

struct BatchLaunch {
  BatchId batch = 0;
  WorkerId worker = 0;
  HardwareId hardware = 0;
  VariantId variant = 0;
  int32_t rows = 0;  // sum of the queries' sizes
  TimePoint start{};
  Duration cold_start{};                        // load time to add before compute (0 when resident)
  const std::vector<Query>* queries = nullptr;  // valid only during Launch
  // Out, optional: an executor that knows each query's execution time alone appends it
  // here, one per query in `queries` order (the engine passes it cleared and hands the
  // times to the batching policy at completion). Left empty: none known.
  std::vector<Duration>* solo = nullptr;
};

class ExecutorPort {
 public:
  virtual ~ExecutorPort() = default;
  // Starts the batch; returns the duration the executor expects it to take (for views).
  virtual Duration Launch(const BatchLaunch& launch) = 0;
};

}  // namespace sloserve

#pragma once
// `sloserve profile measure`: a profile suite measured on this machine from a model
// repository, through the TorchExecutor and the worker protocol (so a sample is what a
// worker's batch takes in `serve`: stacking, forward, splitting into the payload store).
//
// Per task: one hardware type "local-<N>c" per core count asked for (price 0), one variant
// per repository variant with
//   accuracy     top-1 measured on <task>/heldout.json when the task has one (else the
//                config's figure, with a warning; the provenance says which; a heldout.json
//                that does not load is an error)
//   memory_mb    the executor's accounted bytes once loaded (parameters and buffers)
//   load_time    the median of `loads` measured cold starts (load + warm-up)
//   latency      `samples` batches of random pixel inputs per batch size, after `warmup`
//                batches that are not kept; `gap` idle before each (fixed or exponential;
//                default none)
// Only the first core count's load times are kept (a suite has one per variant).
#include <functional>
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/profile/profile.h"
#include "sloserve/torch/model_repository.h"

namespace sloserve {

struct MeasureOptions {
  std::vector<int> batch_sizes = {1, 2, 4, 8, 16, 32};
  std::vector<int> cores = {1};
  int samples = 30;  // kept per (hardware, variant, batch size)
  int warmup = 5;    // batches run first and dropped
  int loads = 3;     // cold starts measured per variant
  // Idle time before each batch (warm-up and samples alike), the worker thread waiting for
  // its next action as serve's does between batches at a light load; 0 = back to back.
  Duration gap{0};
  // Each gap drawn from an exponential distribution of mean `gap` (the idle times Poisson
  // arrivals leave a lightly loaded worker) instead of `gap` every time.
  bool gap_exponential = false;
  Duration slo = Millis(50);
  std::vector<std::string> variants;                 // empty = all
  std::function<void(const std::string&)> progress;  // one line per variant measured
  // Figures the profile takes without measuring them (accuracy without a heldout.json).
  std::function<void(const std::string&)> warning;
};

StatusOr<ProfileSuite> MeasureRepositoryProfile(const ModelRepository& repo,
                                                const MeasureOptions& options);

}  // namespace sloserve

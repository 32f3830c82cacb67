#pragma once
// What an oracle knows in sim (PolicyContext::future_peak_qps): the run's own arrivals,
// counted per model and per second by replaying the same seeded arrival processes the run
// draws from (they are deterministic for a seed), so the count is the load the run will
// see, not an estimate. The replay happens on the first question, so runs whose policies
// never ask pay nothing.
#include <functional>
#include <memory>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/time.h"
#include "sloserve/workload/arrival_spec.h"
#include "sloserve/workload/model_arrivals.h"

namespace sloserve {

// Arrivals per second of every model: [model][second]; beyond the end, 0.
class FutureLoad {
 public:
  // A single-model run (`models` empty: task `task` gets `shared`) or a multi-model one
  // (the streams ModelArrivals::Create takes). The specs must outlive the FutureLoad.
  FutureLoad(const ArrivalSpec* shared, std::vector<ModelStream> models, TaskId task, uint64_t seed)
      : shared_(shared), models_(std::move(models)), task_(task), seed_(seed) {}
  // The largest count of any second overlapping [from, to) for model `t` (0 if unknown).
  double PeakQps(TaskId t, TimePoint from, TimePoint to);

 private:
  void Count();
  const ArrivalSpec* shared_;
  std::vector<ModelStream> models_;
  TaskId task_;
  uint64_t seed_;
  bool counted_ = false;
  std::vector<std::vector<uint32_t>> per_second_;
};

// PolicyContext::future_peak_qps over a shared FutureLoad.
std::function<double(TaskId, TimePoint, TimePoint)> FuturePeakFunction(
    std::shared_ptr<FutureLoad> load);

}  // namespace sloserve

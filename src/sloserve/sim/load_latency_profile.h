#pragma once
// ModelSwitching's offline profiling step, done with the simulator: for every variant,
// worker count and load, run the variant alone under the baselines' load balancing
// (shared central queue, EDF, adaptive batch = largest batch whose latency fits SLO/2)
// with Poisson arrivals and record the p99 response latency. Loads are measured in
// increasing order per (variant, workers) and measurement stops after the first load
// whose p99 exceeds twice the SLO: higher loads only get worse.
#include <functional>
#include <vector>

#include "sloserve/config/run_spec.h"
#include "sloserve/policy/selection/response_latency_table.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct LoadLatencyRequest {
  RunSpec base;                       // suite, task, hardware, slo, seed, service, duration
  std::vector<std::string> variants;  // empty = every variant of the task
  std::vector<int> workers;
  std::vector<double> loads_qps;
  int jobs = 1;
};

StatusOr<ResponseLatencyTable> MeasureResponseLatency(
    const LoadLatencyRequest& request, const ProfileSuite& suite,
    const std::function<void(size_t done, size_t total)>& progress = nullptr);

}  // namespace sloserve

#pragma once
// Runs a list of simulations on a small thread pool. Each run is independent and
// seeded, so results are identical whatever the number of jobs; they come back in input
// order. Suites are loaded once and shared read-only.
#include <functional>
#include <vector>

#include "sloserve/sim/simulation.h"

namespace sloserve {

struct SweepProgress {
  size_t done = 0;
  size_t total = 0;
  double current_fraction = 0;  // progress inside the runs in flight (mean)
};

StatusOr<std::vector<RunResult>> RunSweep(
    const std::vector<RunSpec>& runs, int jobs,
    const std::function<void(const SweepProgress&)>& progress);

}  // namespace sloserve

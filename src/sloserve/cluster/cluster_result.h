#pragma once
// What a model-aware cluster run reports (docs/model-aware.md): one record per request
// and the run's totals.
#include <string>
#include <vector>

#include "sloserve/cluster/analytical_model.h"
#include "sloserve/cluster/placement_rules.h"

namespace sloserve {

struct ClusterRequestRecord {
  int id = 0;
  int model = 0;
  int machine = -1;  // where it was spawned
  int proxy = -1;    // whose proxy served it
  bool cold = false;
  bool refused = false;
  std::string refusal;
  double arrival_s = 0, spawn_s = 0, exit_s = 0;
  double latency_s() const { return exit_s - arrival_s; }
  // adaptive: the estimates at its arrival (first decision).
  LatencyEstimates estimates;
  // The policy that placed it: the run's fixed policy, or the one adaptive acted as.
  ClusterPolicy chosen = ClusterPolicy::kRandom;
};

struct ClusterResult {
  ClusterPolicy policy = ClusterPolicy::kRandom;
  int requests = 0;
  int refused = 0;
  int cold_starts = 0;     // loads a request waited for (prefetch loads: once if any did)
  int prefetch_loads = 0;  // loads ahead of demand
  int evictions = 0;
  double makespan_s = 0;  // first arrival to last exit (the thesis' "end-to-end latency")
  double mean_latency_s = 0, p50_latency_s = 0, p99_latency_s = 0;
  int chose_colocation = 0, chose_queue = 0, chose_registry = 0;  // adaptive
  std::vector<ClusterRequestRecord> records;
};

}  // namespace sloserve

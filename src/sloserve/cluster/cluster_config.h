#pragma once
// The cluster model of model-aware placement (docs/model-aware.md), after the SigmaOS
// thesis: machines with cores and memory, one inference proxy per machine with a
// memory-bounded LRU model cache, requests ("procs") that reserve cores on the machine
// they are spawned on for their CPU pre/post-processing and query a local proxy, or a
// remote one paying a network transfer time. Read from the `cluster:` and `workload:`
// sections of a sim config; every number is range-checked, errors name the key.
#include <cstdint>
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct ClusterMachine {
  std::string name;
  int cores = 4;
  double memory_mb = 0;
  double cache_mb = 0;  // the proxy's model cache; <= memory_mb
};

// A model the cluster serves: a profiled variant, or a copy of one (the multi-model
// workload's "t5-small#3" is a distinct model with t5-small's profile).
struct ClusterModel {
  std::string name;
  VariantId variant = 0;
  double size_mb = 0;
  Duration load_time{};  // the cold start
  Duration infer_time{};
};

// One phase of a phased workload: `count` requests of `model`, all at the phase's start
// (concurrent) or each when the previous one has exited (sequential). A phase starts when
// every request of the previous one has exited (the thesis' warming request, then two
// concurrent ones).
struct WorkloadPhase {
  int model = 0;
  int count = 1;
  bool concurrent = false;
};

struct ClusterWorkload {
  enum class Kind { kPhases, kZipf } kind = Kind::kPhases;
  std::vector<WorkloadPhase> phases;
  // kZipf: Poisson arrivals at `rate_qps`, model of rank k (0-based, over every model)
  // with probability proportional to 1 / (k + 1)^zipf_s.
  double rate_qps = 1;
  int requests = 100;
  double zipf_s = 1.0;
  // Per request: cores reserved on its machine from spawn to exit, CPU pre/post-processing.
  int proc_cores = 1;
  Duration pre{};
  Duration post{};
};

struct ClusterConfig {
  std::vector<ClusterMachine> machines;
  std::vector<ClusterModel> models;
  int target_ongoing_requests = 3;
  Duration network{};  // a remote request's transfer time
  // registry: run a request for a warm proxy on a random free machine (the thesis'
  // LCSched) rather than on the warm machine when it has free cores (sloserve's default).
  bool registry_spawn_random = false;
  // prefetch: popularity over the last `prefetch_window` arrivals; a model with at least
  // `prefetch_min_share` of them is loaded on idle machines until ceil(share x machines)
  // proxies hold it.
  int prefetch_window = 50;
  double prefetch_min_share = 0.1;
  // multiplexed (Ray Serve): at most this many models per replica (LRU beyond it).
  int max_models_per_replica = 3;
  ClusterWorkload workload;
  uint64_t seed = 1;
};

// Models larger than every machine's cache, a request needing more cores than any machine
// has: refused here, before a run, naming the model or key.
Status ValidateCluster(const ClusterConfig& config);

}  // namespace sloserve

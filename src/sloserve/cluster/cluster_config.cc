#include "sloserve/cluster/cluster_config.h"

#include <algorithm>

namespace sloserve {

Status ValidateCluster(const ClusterConfig& c) {
  if (c.machines.empty()) return InvalidArgumentError("cluster.machines: at least one machine");
  if (c.models.empty()) return InvalidArgumentError("cluster: the workload names no model");
  if (c.target_ongoing_requests <= 0) {
    return InvalidArgumentError("cluster.target_ongoing_requests: must be >= 1, got " +
                                std::to_string(c.target_ongoing_requests));
  }
  if (c.network < Duration::zero()) {
    return InvalidArgumentError("cluster.network_s: must be >= 0, got " +
                                std::to_string(ToSeconds(c.network)));
  }
  int max_cores = 0;
  double max_cache = 0;
  for (const ClusterMachine& m : c.machines) {
    if (m.cores < 1)
      return InvalidArgumentError("cluster.machines: " + m.name + ": cores must be >= 1");
    if (!(m.cache_mb > 0) || m.cache_mb > m.memory_mb) {
      return InvalidArgumentError("cluster.cache_mb: machine " + m.name + ": cache " +
                                  std::to_string(m.cache_mb) + " MB must be in (0, memory " +
                                  std::to_string(m.memory_mb) + " MB]");
    }
    max_cores = std::max(max_cores, m.cores);
    max_cache = std::max(max_cache, m.cache_mb);
  }
  for (const ClusterModel& m : c.models) {
    if (m.size_mb > max_cache) {
      return InvalidArgumentError("model " + m.name + " (" + std::to_string(m.size_mb) +
                                  " MB) is larger than every machine's model cache (largest " +
                                  std::to_string(max_cache) + " MB)");
    }
  }
  if (c.workload.proc_cores < 1 || c.workload.proc_cores > max_cores) {
    return InvalidArgumentError("workload.proc_cores: must be in [1, " + std::to_string(max_cores) +
                                "] (the most cores of a machine), got " +
                                std::to_string(c.workload.proc_cores));
  }
  if (c.workload.pre < Duration::zero())
    return InvalidArgumentError("workload.pre_s: must be >= 0");
  if (c.workload.post < Duration::zero())
    return InvalidArgumentError("workload.post_s: must be >= 0");
  if (c.max_models_per_replica < 1) {
    return InvalidArgumentError("cluster.max_models_per_replica: must be >= 1");
  }
  if (c.prefetch_window < 1) return InvalidArgumentError("cluster.prefetch_window: must be >= 1");
  for (const WorkloadPhase& p : c.workload.phases) {
    if (p.model < 0 || p.model >= static_cast<int>(c.models.size()) || p.count < 1) {
      return InvalidArgumentError("workload.phases: each phase needs a model and count >= 1");
    }
  }
  return OkStatus();
}

}  // namespace sloserve

#pragma once
// A model-aware placement run (docs/model-aware.md) on the engine and the driver that sim
// and serve share: the config becomes an engine deployment (cluster_deployment.h), the
// procs around it are the driver's arrival source (proc_arrivals.h), the proxies run on
// ProxyExecutor, and the driver moves virtual time. Deterministic for a config and seed.
#include "sloserve/cluster/cluster_config.h"
#include "sloserve/cluster/cluster_result.h"
#include "sloserve/core/status.h"

namespace sloserve {

StatusOr<ClusterResult> RunCluster(const ClusterConfig& config, ClusterPolicy policy);

}  // namespace sloserve

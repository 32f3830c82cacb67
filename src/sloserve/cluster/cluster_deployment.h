#pragma once
// A `cluster:` config as an engine deployment (docs/model-aware.md, "On the engine"): each
// machine is one worker (its inference proxy, one replica) on a machine of its own whose
// memory is the proxy's model cache (`cache_mb`), so the engine's residency and its LRU
// eviction of the machine's memory are the cache; each model of the config is a task with
// one variant (a copy "t5-small#3" is a model of its own with t5-small's profile: size,
// load time, inference time on every machine). Nothing is resident at start.
#include <vector>

#include "sloserve/cluster/cluster_config.h"
#include "sloserve/engine/engine.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct ClusterDeployment {
  ProfileSuite suite;               // task i = variant i = config model i; hardware i = machine i
  std::vector<WorkerSpec> workers;  // worker i = machine i's proxy
};

ClusterDeployment MakeClusterDeployment(const ClusterConfig& config);

}  // namespace sloserve

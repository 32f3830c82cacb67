#include "sloserve/cluster/cluster_deployment.h"

#include <string>

namespace sloserve {

ClusterDeployment MakeClusterDeployment(const ClusterConfig& c) {
  ClusterDeployment d;
  d.suite.set_name("cluster");
  for (const ClusterModel& m : c.models) {
    TaskSpec t;
    t.name = m.name;
    const TaskId task = d.suite.AddTask(t);
    VariantSpec v;
    v.name = m.name;
    v.task = task;
    v.memory_mb = m.size_mb;
    v.load_time = m.load_time;
    d.suite.AddVariant(v);
  }
  for (size_t i = 0; i < c.machines.size(); ++i) {
    const ClusterMachine& m = c.machines[i];
    HardwareSpec h;
    h.name = "machine-" + std::to_string(i);
    h.cores = m.cores;
    h.memory_gb = m.cache_mb / 1024.0;  // the engine's machine memory is the model cache
    const HardwareId hw = d.suite.AddHardware(h);
    for (VariantId v = 0; v < c.models.size(); ++v) {
      d.suite.AddLatency(hw, v, 1, LatencyDistribution({c.models[v].infer_time.count()}));
    }
    WorkerSpec w;
    w.name = "proxy-" + m.name;
    w.hardware = hw;
    w.machine = std::to_string(i) + ":" + m.name;
    w.preload_none = true;
    d.workers.push_back(w);
  }
  return d;
}

}  // namespace sloserve

#include "sloserve/cluster/cluster_sim.h"

#include <memory>

#include "sloserve/cluster/cluster_deployment.h"
#include "sloserve/cluster/directed_placement.h"
#include "sloserve/cluster/proc_arrivals.h"
#include "sloserve/engine/driver.h"
#include "sloserve/engine/engine.h"
#include "sloserve/exec/proxy_executor.h"
#include "sloserve/policy/policy_spec.h"

namespace sloserve {

StatusOr<ClusterResult> RunCluster(const ClusterConfig& config, ClusterPolicy policy) {
  RETURN_IF_ERROR(ValidateCluster(config));
  const ClusterDeployment dep = MakeClusterDeployment(config);
  // Each proxy serves its queue first come first served, one request a batch, the model's
  // only variant; placement routes every query to the proxy its proc was pointed at.
  PolicySpec spec;
  spec.dispatch = "round_robin";
  spec.batching = "fifo";
  spec.selection = "fixed";
  ASSIGN_OR_RETURN(PolicySet policies, MakePolicySet(spec));
  auto directed = std::make_unique<DirectedPlacement>();
  DirectedPlacement* placement = directed.get();
  policies.placement = std::move(directed);

  ServiceTimeOptions service;  // one sample per (machine, model): every quantile is it
  ProxyExecutor executor(ServiceTimeModel(&dep.suite, service, config.seed));
  Driver driver(DriverOptions{});
  EngineOptions options;
  options.task = 0;
  options.slo = Seconds(1'000'000'000);
  options.submit_offline = driver.OfflineSubmitter();
  // multiplexed: Ray Serve's max_num_models_per_replica, LRU beyond it.
  if (policy == ClusterPolicy::kMultiplexed)
    options.max_resident_variants = config.max_models_per_replica;
  ProcArrivals procs(config, policy, &executor, placement);
  ASSIGN_OR_RETURN(auto engine, Engine::Create(&dep.suite, dep.workers, std::move(policies),
                                               &executor, options, config.seed));
  engine->set_sink([&procs](const QueryRecord& r) { procs.OnRecord(r); });
  driver.Bind(engine.get(), &executor);
  driver.SetArrivals(&procs);
  ManualClock clock;
  driver.RunVirtual(&clock);
  if (engine->in_system() != 0) {
    return InternalError("cluster run ended with " + std::to_string(engine->in_system()) +
                         " requests neither completed nor refused");
  }
  return procs.Result();
}

}  // namespace sloserve

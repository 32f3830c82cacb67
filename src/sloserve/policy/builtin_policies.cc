// Every built-in policy, registered by name. Docs: docs/policies/<name>.md.
#include "sloserve/policy/batching/clipper.h"
#include "sloserve/policy/batching/clockwork.h"
#include "sloserve/policy/batching/edf.h"
#include "sloserve/policy/batching/nexus.h"
#include "sloserve/policy/batching/orloj.h"
#include "sloserve/policy/batching/single.h"
#include "sloserve/policy/dispatch/central_queue.h"
#include "sloserve/policy/dispatch/clkwrk.h"
#include "sloserve/policy/dispatch/drs.h"
#include "sloserve/policy/dispatch/join_shortest_queue.h"
#include "sloserve/policy/dispatch/kairos.h"
#include "sloserve/policy/dispatch/per_model_dispatch.h"
#include "sloserve/policy/dispatch/quota.h"
#include "sloserve/policy/dispatch/ribbon.h"
#include "sloserve/policy/dispatch/round_robin.h"
#include "sloserve/policy/dispatch/shared_queue.h"
#include "sloserve/policy/dispatch/slo_partition.h"
#include "sloserve/policy/placement/cluster_placement.h"
#include "sloserve/policy/placement/model_aware_placement.h"
#include "sloserve/policy/placement/random_placement.h"
#include "sloserve/policy/planning/composed_planning.h"
#include "sloserve/policy/planning/infadapter_planning.h"
#include "sloserve/policy/planning/kairos_planning.h"
#include "sloserve/policy/planning/rate_planning.h"
#include "sloserve/policy/planning/static_planning.h"
#include "sloserve/policy/registry.h"
#include "sloserve/policy/selection/fixed.h"
#include "sloserve/policy/selection/jellyfish_plus.h"
#include "sloserve/policy/selection/model_switching.h"
#include "sloserve/policy/selection/ramsis.h"

namespace sloserve {

void RegisterBuiltinPolicies(PolicyRegistry* r) {
  r->AddSelection("fixed", "one configured variant per task (default: the most accurate)",
                  FixedSelection::Create);
  r->AddSelection("jellyfish_plus",
                  "most accurate variant whose throughput covers the load, latency < SLO/2",
                  JellyfishPlusSelection::Create);
  r->AddSelection("model_switching",
                  "most accurate variant whose measured p99 under the load meets the SLO",
                  ModelSwitchingSelection::Create);
  r->AddSelection("ramsis", "per-batch choice from the MDP policy for the anticipated load",
                  RamsisSelection::Create);
  r->AddBatching("edf", "earliest deadline first, maximal batching",
                 [](const PolicyParams& p, std::unique_ptr<SelectionPolicy> s) {
                   return EdfBatching::Create(p, std::move(s), /*fifo=*/false);
                 });
  r->AddBatching("fifo", "first come first served, maximal batching",
                 [](const PolicyParams& p, std::unique_ptr<SelectionPolicy> s) {
                   return EdfBatching::Create(p, std::move(s), /*fifo=*/true);
                 });
  r->AddBatching("orloj", "distribution-aware priority batching for dynamic models (ORLOJ)",
                 OrlojBatching::Create);
  r->AddBatching("clockwork", "plan on a point estimate of batch latency, drop predicted misses",
                 ClockworkBatching::Create);
  r->AddBatching("nexus", "batch size precomputed from mean latency and rate, early drop",
                 NexusBatching::Create);
  r->AddBatching("clipper", "AIMD adaptive batch size on measured batch latency",
                 ClipperBatching::Create);
  r->AddDispatch("round_robin", "each arrival to the next worker in turn",
                 RoundRobinDispatch::Create);
  r->AddDispatch("jsq", "each arrival to the worker with the fewest outstanding queries",
                 JoinShortestQueueDispatch::Create);
  r->AddDispatch("quota", "arrivals in proportion to the workers' plan quotas (smooth WRR)",
                 QuotaDispatch::Create);
  r->AddDispatch("per_model",
                 "each model's queries to its own dispatcher (model_dispatch), the rest to "
                 "default_dispatch",
                 PerModelDispatch::Create);
  r->AddDispatch("central", "queries wait centrally; idle workers take up to central_batch",
                 CentralQueueDispatch::Create);
  r->AddDispatch("shared", "queries stay central; idle workers batch straight from it",
                 SharedQueueDispatch::Create);
  r->AddDispatch("slo_partition", "round robin within the workers of the query's SLO class",
                 SloPartitionDispatch::Create);
  // Kairos (HPDC'23) and its baselines: docs/kairos.md.
  r->AddBatching("single", "one query per batch, first come first served (Kairos instances)",
                 SingleBatching::Create);
  r->AddDispatch("kairos", "min-cost query-to-instance matching, QoS-penalized (Kairos)",
                 KairosDispatch::Create);
  r->AddDispatch("ribbon", "FCFS to idle instances, base type first (Ribbon, as in Kairos)",
                 RibbonDispatch::Create);
  r->AddDispatch("drs", "size threshold: large queries to base type, small to auxiliary",
                 DrsDispatch::Create);
  r->AddDispatch("clkwrk", "route to the instance queue predicted to meet QoS (Clockwork-like)",
                 ClkwrkDispatch::Create);
  r->AddPlacement("random", "each arrival to a uniformly random active worker",
                  RandomPlacement::Create);
  r->AddPlacement("model_aware", "prefer the least loaded worker already holding the model",
                  ModelAwarePlacement::Create);
  // The SigmaOS thesis' model-aware policies, the cluster simulator's rules on workers
  // (docs/model-aware.md); `random` above is the thesis' default scheduler.
  for (ClusterPolicy c :
       {ClusterPolicy::kColocation, ClusterPolicy::kColocationQueue, ClusterPolicy::kRegistry,
        ClusterPolicy::kAdaptive, ClusterPolicy::kPrefetch, ClusterPolicy::kMultiplexed}) {
    r->AddPlacement(ClusterPolicyName(c), ClusterPlacementSummary(c),
                    [c](const PolicyParams& p) { return ClusterPlacement::Create(c, p); });
  }
  r->AddPlanning("static", "keep the configured deployment", StaticPlanning::Create);
  r->AddPlanning("infadapter",
                 "InfAdapter: variants, cores and quotas by Eq. 1 on the forecast load",
                 InfAdapterPlanning::Create);
  r->AddPlanning("ms_plus", "InfAdapter's MS+ baseline: one variant at a time and its cores",
                 InfAdapterPlanning::CreateMsPlus);
  r->AddPlanning("vpa_plus", "InfAdapter's VPA+ baseline: one fixed variant, cores to the rate",
                 InfAdapterPlanning::CreateVpaPlus);
  r->AddPlanning(
      "composed",
      "issue 32: variants, hardware types and workers per model, Eq. 1 under a $/h budget",
      ComposedPlanning::Create);
  r->AddPlanning("rate", "keep enough workers active for the observed rate", RatePlanning::Create);
  r->AddPlanning("kairos_mix",
                 "Kairos: the instance mix with the best upper bound under a $/h budget, "
                 "re-picked as query sizes drift",
                 KairosPlanning::Create);
}

}  // namespace sloserve

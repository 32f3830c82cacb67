#pragma once
// The model-aware placement policies of the SigmaOS thesis in the engine (`sloserve serve`
// and `sloserve sim` without a `cluster:` section): colocation, colocation_queue, registry,
// adaptive, prefetch, multiplexed (docs/policies/colocation.md, docs/model-aware.md). Each
// worker is a proxy with a model cache; the decisions are the cluster simulator's
// (cluster/placement_rules.h), fed with the workers' residency, queues and live estimates
// learned from completed loads and batches. On a multi-model pool only workers serving the
// query's model are targets (dispatch/worker_eligibility.h), and a variant's inference
// time is first estimated on the first worker's type that profiles it.
#include <vector>

#include "sloserve/cluster/placement_rules.h"
#include "sloserve/policy/dispatch/worker_eligibility.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

// One line for `sloserve policies`.
const char* ClusterPlacementSummary(ClusterPolicy policy);

class ClusterPlacement : public PlacementPolicy {
 public:
  struct Options {
    VariantId fixed_model = kNoId;  // resolved at Init from `warm_variant` / `variant`
    std::string
        model_name;  // the option's value: one variant, or one per task ("" = each task's first)
    int target_ongoing_requests = 3;
    double network_s = 0;  // in the registry's estimate (serve sends no transfer)
    double cache_mb = 0;   // a worker's model cache; 0 = its machine's memory
    int prefetch_window = 50;
    double prefetch_min_share = 0.1;
    int max_models_per_replica = 3;
  };
  // One factory per policy name (the registry binds the policy).
  static StatusOr<std::unique_ptr<PlacementPolicy>> Create(ClusterPolicy policy,
                                                           const PolicyParams& params);
  ClusterPlacement(ClusterPolicy policy, Options o) : policy_(policy), opt_(std::move(o)) {}

  Status Init(const PolicyContext& ctx) override;
  PlacementDecision Place(const Query& q, const std::vector<WorkerView>& workers,
                          const std::vector<MachineView>& machines, TimePoint now) override;
  void OnBatchComplete(const BatchCompletion& c) override;
  void OnLoadComplete(WorkerId w, VariantId v, Duration took, TimePoint now) override;

  // The live means (seconds) the analytical model uses for a variant: for tests and logs.
  ModelTimes TimesOf(VariantId v) const;
  // The analytical model's estimates and choice for the last placed query (adaptive).
  const PlacementChoice& last_choice() const { return last_; }

 private:
  struct Learned {  // running mean with the profile's value as one prior observation
    double sum = 0;
    int n = 0;
    void Add(double x) {
      sum += x;
      ++n;
    }
    double Mean() const { return n == 0 ? 0 : sum / n; }
  };
  VariantId ModelOf(const Query& q) const;
  double CacheMb(const WorkerView& w, const std::vector<MachineView>& machines) const;
  double HeldMb(const WorkerView& w) const;
  std::vector<ProxyState> Proxies(VariantId model, TaskId task,
                                  const std::vector<WorkerView>& workers,
                                  const std::vector<MachineView>& machines, TimePoint now);
  // LRU evictions that make room for `model` on `w` (cache bound, multiplexed's K models).
  std::vector<VariantId> Evictions(const WorkerView& w, VariantId model,
                                   const std::vector<MachineView>& machines) const;
  std::vector<uint64_t>& Row(std::vector<std::vector<uint64_t>>* table, WorkerId w);
  uint64_t Cell(const std::vector<std::vector<uint64_t>>& table, WorkerId w, VariantId v) const;

  ClusterPolicy policy_;
  Options opt_;
  const ProfileSuite* suite_ = nullptr;
  Rng rng_;
  PopularityWindow window_{50};
  std::vector<VariantId> task_model_;  // task -> its model when no variant is configured
  std::vector<Learned> infer_, load_;  // per variant
  // Per worker id, per variant: queries placed and not completed; last use (LRU clock).
  std::vector<std::vector<uint64_t>> pending_, last_use_;
  std::vector<TimePoint> load_done_;  // per worker: the last load's completion
  uint64_t clock_ = 0;
  PlacementChoice last_;
  WorkerEligibility eligibility_;
};

}  // namespace sloserve

#pragma once
// Kairos' configuration planning inside a running deployment (HPDC'23, sections 5.2 and
// 8.4, Fig. 12): at each plan tick, from the sizes of the most recent queries (the
// engine's PlanningInput::recent_sizes, the paper's query monitor), every instance mix
// within the budget is ranked by Kairos' throughput upper bound and the similarity pick
// is taken, as `sloserve plan kairos` does offline; no mix is tried online. When the pick
// differs from the mix serving now and its bound is higher by at least `min_gain`, it
// becomes the active mix: workers of a type it has fewer of are deactivated (they finish
// their queues), workers of a type it has more of are reactivated, or added when the pool
// has none left to reactivate. So when the size distribution drifts, the mix follows it in
// one step (Fig. 12). Cost follows the active workers.
// Options:
//   budget_per_hour  $/h the active mix may cost (required, > 0)
//   max_instances    "type:n,..." per-type maxima (default: as many as the budget buys)
//   min_sizes        arrivals seen before the first pick (default 200)
//   min_gain         the pick's bound over the current mix's, relative, before a change
//                    (default 0.05: a sample's noise does not move workers back and forth)
// The served variant and the QoS are the deployment's: its task's most accurate variant
// (as `fixed` picks it, and every Kairos experiment serves) and its SLO. A live server
// picks off the engine thread (the space grows fast with the budget: 77,096 mixes under
// 10 $/h take about 70 ms) and applies the pick at the first tick after it is ready; sim
// picks inline.
#include <memory>
#include <optional>
#include <string>

#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/latency_learning/latency_predictor.h"
#include "sloserve/policy/params.h"
#include "sloserve/policy/planning/background_solve.h"
#include "sloserve/policy/planning/instance_configs.h"

namespace sloserve {

class KairosPlanning : public PlanningPolicy {
 public:
  struct Options {
    double budget_per_hour = 0;
    std::string max_instances;
    int64_t min_sizes = 200;
    double min_gain = 0.05;
  };
  static StatusOr<std::unique_ptr<PlanningPolicy>> Create(const PolicyParams& params);
  explicit KairosPlanning(Options o) : options_(std::move(o)) {}
  Status Init(const PolicyContext& ctx) override;
  bool reads_recent_sizes() const override { return true; }
  void Plan(const PlanningInput& input, DeploymentPlan* out) override;

  // The mix picked at the last plan that computed one (empty before), for tests and logs.
  const InstanceCounts& last_pick() const { return last_pick_; }

  // One pick: the similarity pick for the sizes, its bound, and the bound of the mix
  // serving when it was asked for (the same sizes).
  struct MixPick {
    InstanceCounts pick;
    double pick_bound = 0;
    InstanceCounts current;
    double current_bound = 0;
  };

 private:
  // Whether the mix includes w: a worker dedicated to another model (a plan's dedication
  // or a pin) serves that model's load, which this plan is not for; it is left alone.
  bool Manages(const WorkerView& w) const { return w.model == kNoId || w.model == task_; }
  // The instances per type serving now or starting (neither deactivated nor retired).
  InstanceCounts CurrentMix(const std::vector<WorkerView>& workers) const;
  // Makes `r.pick` the active mix when it still differs from the serving one, which is
  // still the one it was compared with, by at least min_gain.
  void Apply(const MixPick& r, const std::vector<WorkerView>& workers, DeploymentPlan* out);
  // Names every worker it manages not retired: of each type, `target` active (those active now
  // first), the rest inactive; adds workers of a type the pool lacks.
  void MakeActive(const InstanceCounts& target, const std::vector<WorkerView>& workers,
                  DeploymentPlan* out) const;

  Options options_;
  // Copies a pick off the engine thread reads: such a job may outlive the policy.
  std::shared_ptr<const ProfileSuite> suite_;
  std::shared_ptr<const LatencyPredictor> predictor_;
  ConfigSpace space_;
  std::optional<BackgroundSolve<MixPick>> background_;  // live only
  TaskId task_ = 0;
  VariantId variant_ = kNoId;
  Duration qos_{};
  InstanceCounts last_pick_;
};

}  // namespace sloserve

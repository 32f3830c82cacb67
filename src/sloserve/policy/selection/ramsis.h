#pragma once
// RAMSIS online model selection (RAMSIS sections 3.2 and 6): each worker serves its own
// queue (route-then-schedule: pair with dispatch `round_robin`, batching `edf`), and at
// every batch the selection looks up the policy generated offline for the anticipated
// load: the lowest-load policy of the set that covers the load measured over the last
// `window_ms`, queried with (queue length, slack of the earliest deadline). The policy
// set spans [min_qps, max_qps] with adjacent expected accuracies at most `accuracy_step`
// apart; it is generated at Init (or read from `cache_dir`) for the deployment's SLO,
// worker count and arrival model. Above max_qps (default: the deployment's peak
// throughput) no policy covers the load and the fastest variant serves the whole queue
// while one more policy is generated as an offline job (PolicyContext::submit_offline)
// and published into the set on the engine thread: no decision takes a lock.
// In a server (PolicyContext::live) a set neither cached nor shipped is generated the
// same way, as an offline job, while the fastest variant serves every query; readiness
// says so (PolicyContext::degraded) until the set is published. sim generates it at Init.
// Workers added by a plan after Init belong to the first SLO class.
// Multi-model pools (docs/composed.md, "Selection"): the MDP is generated for the workers
// that serve the model at Init (dedicated to it, or undedicated with hardware that
// profiles one of its variants; dispatch/worker_eligibility.h), on the first one's
// hardware. When a plan changes how many of them are active (OnWorkersChanged), the load
// measured is scaled by (MDP workers / active serving workers) before a policy is looked
// up, so the lookup sees the per-worker load the MDP assumed (one SLO class only; with
// slo_workers the classes keep their sizes).
// Over the loaded set (docs/composed.md): when the active workers dedicated to the model
// and not pinned (a plan's, loaded with its planned variants) hold only some of the MDP's
// variants, the selection chooses among those: a set for them (same SLO and MDP workers)
// is generated as an offline job and cached by variant set, and until it is published the
// current set's decisions stand where they name a held variant, else the fastest held one
// serves. Pools without such workers (every single-model deployment) choose as before.
// Options: min_qps (default 1% of max), max_qps, accuracy_step (0.01), discretization
//   (fld|md), d (100), mdp_batching (maximal|variable; the
//   MDP's batching, distinct from the engine's policy.batching), max_queue (32), quantile (0.95),
//   arrival (poisson|gamma), cv (1), criterion (accuracy-per-query|undiscounted-sweeps),
//   threads (2, generation only), variants (list; default
//   all), window_ms (500), cache_dir (default $SLOSERVE_CACHE_DIR or ~/.cache/sloserve),
//   slo_workers (multiple SLOs, appendix G: one policy set per SLO class for its workers,
//   each class's load measured on its own queries; pair with dispatch slo_partition),
//   load_qps (> 0: a single policy for this load, used whatever the monitor says; for
//   checking the MDP's expectations against simulation, section 7.3.1).
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sloserve/mdp/policy_set.h"
#include "sloserve/policy/dispatch/worker_eligibility.h"
#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/slo_classes.h"
#include "sloserve/workload/load_monitor.h"

namespace sloserve {

class RamsisSelection : public SelectionPolicy {
 public:
  struct Options {
    mdp::MdpOptions mdp;  // load_qps, slo, workers filled at Init
    mdp::PolicySetOptions set;
    Duration window = Millis(500);
    std::string cache_dir;
    std::string slo_workers;    // "" = one class: the deployment's SLO, every worker
    double fixed_load_qps = 0;  // > 0: one policy generated for this load, always used
  };
  static StatusOr<std::unique_ptr<SelectionPolicy>> Create(const PolicyParams& params);
  explicit RamsisSelection(Options o) : options_(std::move(o)) {}

  Status Init(const PolicyContext& ctx) override;
  void OnArrival(const Query& q, TimePoint now) override;
  bool follows_load() const override { return true; }
  void OnWorkersChanged(const std::vector<WorkerView>& workers) override;
  SelectionDecision Choose(const WorkerView& worker, const QueueView& queue, const Query& head,
                           TimePoint now) override;
  // The policy set of SLO class `c` (0 when there is one SLO).
  const std::vector<mdp::Policy>& policies(size_t c = 0) const { return (*classes_)[c].policies; }
  // The workers the MDP was generated for, and the factor the measured load is scaled by
  // (MDP workers / active workers serving the model; 1 until they differ).
  int mdp_workers() const { return mdp_workers_; }
  double load_scale() const { return load_scale_; }
  // The variants choices are restricted to (sorted; empty: every variant of the MDP).
  const std::vector<VariantId>& variant_set() const { return restrict_; }

 private:
  // All of it is touched on the engine thread only (decisions, and the publish steps of
  // offline jobs, which the driver runs there); offline work itself reads only copies.
  struct ClassState {
    SloClass slo_class;
    LoadMonitor monitor;
    std::vector<mdp::Policy> policies;  // sorted by load
    mdp::MdpOptions mdp;                // this class's MDP (SLO, workers)
    bool in_flight = false;             // a generation for this class is submitted
    // Below this load (the set's defaulted lower end) policies are added on demand.
    double extend_below_qps = 0;
    uint64_t epoch = 0;  // bumped when the set is swapped for another
  };
  // Submits an offline job generating a policy for `qps`, if none is in flight for the
  // class, when no policy covers it, or when it is below a defaulted set's lower end and
  // the policy covering it assumes more than twice the load (a set's default range starts
  // at 1% of the deployment's peak, which for fast real models is far above the loads
  // they serve: its lowest policy then picks for a load the deployment does not have).
  // The job's publish step inserts the policy into the class's set.
  void Extend(size_t c, double qps);
  // Live only (PolicyContext::live): prepares the offline job generating class c's set
  // (submitted at the end of Init); its publish step replaces the fallback, the fastest
  // variant, with the set.
  void GenerateInBackground(size_t c, const mdp::MdpOptions& m, const mdp::PolicySetOptions& set,
                            const mdp::PolicySetProgress& progress);
  // What readiness says while some class serves the fastest variant ("" when none does).
  std::string DegradedNote() const;
  // The MDP's variants held by the active, unpinned workers dedicated to the model;
  // empty when there are none or they hold every one.
  std::vector<VariantId> LoadedSet(const std::vector<WorkerView>& workers) const;
  // Restricts choices to `variants` (empty: none), installing its policy set if cached, else
  // submitting its generation.
  void UseVariantSet(std::vector<VariantId> variants);
  // Among `variants` on the MDP's hardware (those profiled at batch 1): the fastest at
  // batch 1 with its row cap (its largest batch, at most m.max_queue; kNoId if none), and
  // the highest throughput of one worker at that cap.
  struct Speed {
    SelectionDecision fastest{};
    double peak_per_worker = 0;
  };
  Speed SpeedOf(const std::vector<VariantId>& variants, const mdp::MdpOptions& m) const;
  // Makes the cached set of `key` class 0's (its MDP `m`).
  void Install(ClassState& cls, const std::vector<VariantId>& key, const mdp::MdpOptions& m);
  Options options_;
  // Shared with the publish steps of offline jobs (as weak pointers), so a step that
  // arrives after this policy is gone, or re-initialised, does nothing.
  std::shared_ptr<std::vector<ClassState>> classes_ = std::make_shared<std::vector<ClassState>>();
  std::vector<size_t> worker_class_;  // worker id -> class (ids beyond it: class 0)
  std::vector<SloClass> slo_classes_;
  const ProfileSuite* suite_ = nullptr;
  std::function<void(OfflineJob)> submit_offline_;
  SelectionDecision fastest_{};         // beyond the set: fastest variant, its largest batch
  std::vector<OfflineJob> background_;  // Init: set generations to submit, by class
  std::function<void(const std::string&)> degraded_;
  std::string failed_;  // why a background generation failed (engine thread)
  TaskId task_ = 0;
  HardwareId hw_ = 0;                    // the MDP's hardware
  mdp::MdpOptions base_mdp_;             // class 0's MDP at Init (every variant)
  std::vector<VariantId> mdp_variants_;  // the variants it chooses among, sorted
  std::vector<VariantId> restrict_;      // LoadedSet, as last seen (empty: no restriction)
  std::vector<VariantId> installed_;     // the variant set classes_[0].policies is for
  SelectionDecision restrict_fastest_{};
  // Policy sets per variant set (empty key: the Init set), and those being generated.
  std::map<std::vector<VariantId>, std::vector<mdp::Policy>> variant_sets_;
  std::set<std::vector<VariantId>> generating_;
  std::map<std::vector<VariantId>, double> extend_below_;  // their ClassState::extend_below_qps
  WorkerEligibility eligibility_;
  int mdp_workers_ = 0;
  double load_scale_ = 1;
};

}  // namespace sloserve

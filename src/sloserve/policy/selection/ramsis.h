#pragma once
// RAMSIS online model selection (RAMSIS sections 3.2 and 6): each worker serves its own
// queue (route-then-schedule: pair with dispatch `round_robin`, batching `edf`), and at
// every batch the selection looks up the policy generated offline for the anticipated
// load: the lowest-load policy of the set that covers the load measured over the last
// `window_ms`, queried with (queue length, slack of the earliest deadline). The policy
// set spans [min_qps, max_qps] with adjacent expected accuracies at most `accuracy_step`
// apart; it is generated at Init (or read from `cache_dir`) for the deployment's SLO,
// worker count and arrival model. Above max_qps (default: the deployment's peak
// throughput) no policy covers the load and the fastest variant serves the whole queue.
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
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sloserve/mdp/policy_set.h"
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
  SelectionDecision Choose(const WorkerView& worker, const QueueView& queue, const Query& head,
                           TimePoint now) override;
  // The policy set of SLO class `c` (0 when there is one SLO).
  const std::vector<mdp::Policy>& policies(size_t c = 0) const { return classes_[c].policies; }

 private:
  // A policy generated off the decision path for a load no policy covered.
  struct Pending {
    std::mutex mu;
    std::optional<mdp::Policy> ready;  // guarded by mu
    bool in_flight = false;            // guarded by mu
  };
  struct ClassState {
    SloClass slo_class;
    LoadMonitor monitor;
    std::vector<mdp::Policy> policies;  // sorted by load
    mdp::MdpOptions mdp;                // this class's MDP (SLO, workers)
    std::shared_ptr<Pending> pending = std::make_shared<Pending>();
  };
  // Adopts a finished background policy; starts one for `qps` if none covers it.
  void Extend(ClassState& cls, double qps);
  Options options_;
  std::vector<ClassState> classes_;
  std::vector<size_t> worker_class_;  // worker id -> class
  std::vector<SloClass> slo_classes_;
  const ProfileSuite* suite_ = nullptr;
  std::function<void(std::function<void()>)> run_offline_;
  SelectionDecision fastest_{};  // beyond the set: fastest variant, its largest batch
};

}  // namespace sloserve

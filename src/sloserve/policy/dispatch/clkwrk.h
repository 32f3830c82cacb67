#pragma once
// CLKWRK query distribution: the Clockwork-inspired central controller the Kairos paper
// compares against (HPDC'23, section 7; Clockwork: Gujarati et al., OSDI'20). Every
// instance keeps its own FCFS queue (use batching `single`); the controller tracks each
// instance's predicted free time (the running query's busy_until plus the predicted
// latency of every query it has queued there) and routes each arrival at once to the
// instance where it is predicted to finish within qos_factor x its QoS target, the
// earliest such finish first. If no instance can meet the target the query goes to the
// instance with the earliest predicted finish (served late, never dropped). It does not
// weigh instance types against each other (no heterogeneity coefficient).
// With `predict: online` the service time of each query that found its instance idle is
// read back as busy_until - routing time and fed to the predictor.
// On a multi-model pool a query is routed only to instances serving its model, with its
// model's latency on the instance's type (kairos_common.h).
// Options: qos_factor (0.98), variant, and the LatencyPredictor's predict /
// prediction_noise / online_* options (latency_learning/latency_predictor.h).
#include <deque>
#include <memory>
#include <vector>

#include "sloserve/policy/dispatch/kairos_common.h"
#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/latency_learning/latency_predictor.h"

namespace sloserve {

class ClkwrkDispatch : public DispatchPolicy {
 public:
  struct Options {
    double qos_factor = 0.98;
    std::string variant;
    LatencyPredictor::Options predictor;
  };
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);
  explicit ClkwrkDispatch(Options o) : options_(std::move(o)), predictor_(options_.predictor) {}
  Status Init(const PolicyContext& ctx) override;
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

 private:
  struct Lane {
    std::deque<Duration> queued;  // predicted latency of queries routed here, not started
    Duration queued_sum{0};
    // Online learning observes queries that found their instance idle (they start at
    // routing time, so busy_until - routing time is their service time).
    bool observing = false;
    TimePoint started{};
    TimePoint prev_busy_until{};
    int rows = 0;
    VariantId variant = kNoId;  // of the observed query
  };
  Options options_;
  LatencyPredictor predictor_;
  HeteroDeployment deployment_;
  std::vector<Lane> lanes_;
};

}  // namespace sloserve

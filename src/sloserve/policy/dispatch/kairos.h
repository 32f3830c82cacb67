#pragma once
// Kairos query distribution (Li et al., "KAIROS: Building Cost-Efficient Machine Learning
// Inference Systems with Heterogeneous Cloud Resources", HPDC'23, section 5.1, Eqs. 2-8).
//
// Central queue; every instance serves one query (a batch of rows) at a time. At each
// decision point (an arrival, an instance freeing up) the policy builds the m x n matrix
// of Eq. 4 over the first `kairos_window` pending queries (deadline order = arrival
// order under one QoS) and every active instance:
//   L_ij = remaining_j + latency(size_i, type_j)
// where remaining_j is the time until instance j is free (busy_until - now, plus the
// predicted latency of anything in its local queue), latency() comes from the
// LatencyPredictor (profile mean by default; p99, or learned online; optional noise).
// QoS (Eq. 5 with the safety factor of section 5.1): if L_ij + W_i > qos_factor x T_i
// (W_i = now - arrival, T_i the query's QoS target), L_ij is replaced by
// penalty x T_i (Eq. 8). The cost is C_j x L_ij with C_j the heterogeneity coefficient
// (kairos_common.h), and the rectangular min-cost assignment is solved exactly
// (LinearAssignment: Jonker-Volgenant shortest augmenting paths).
//
// Acting on the matching (the paper leaves this implicit; our choice):
//  - a query matched to an idle instance with an empty local queue is dispatched to it,
//    and the instance starts it at once (use batching `single`);
//  - a query matched to a busy instance stays in the central queue: the match says
//    "wait for that instance"; the next decision point (that instance freeing up, or an
//    arrival) re-solves with fresh remaining times and waiting times;
//  - a query matched to an idle instance at the penalty cost (it would miss its QoS
//    there, with the safety factor) stays central while some busy instance would still
//    finish it by its deadline (no safety factor) once free: that instance's completion
//    is a decision point. Otherwise waiting cannot help, and with no further arrival
//    nothing would ever dispatch it, so it goes where matched now (served late, or
//    within QoS if only the safety factor penalised it);
//  - no solve happens when no active instance is idle with an empty queue;
//  - on a multi-model pool (kairos_common.h) a pair of a query and an instance that does
//    not serve its model is excluded from the matching (a cost above any other, and never
//    acted on); a query's latency and coefficient are its model's on the instance's type.
// Online learning (`predict: online`): the service time of each dispatched query is
// read back as busy_until - dispatch time at the next decision point (the executor's own
// duration, as Clipper batching does) and fed to the predictor.
//
// Options (shared bag): qos_factor (0.98), penalty (10, in units of the QoS target),
// kairos_window (100 pending queries considered per decision), variant (the task's
// most accurate), and the predictor's predict / prediction_noise / online_bucket_rows /
// online_table_samples (latency_learning/latency_predictor.h).
#include <memory>
#include <vector>

#include "sloserve/policy/assignment/linear_assignment.h"
#include "sloserve/policy/dispatch/kairos_common.h"
#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/latency_learning/latency_predictor.h"

namespace sloserve {

class KairosDispatch : public DispatchPolicy {
 public:
  struct Options {
    double qos_factor = 0.98;
    double penalty = 10;
    int window = 100;
    std::string variant;
    LatencyPredictor::Options predictor;
  };
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);
  explicit KairosDispatch(Options o) : options_(std::move(o)), predictor_(options_.predictor) {}
  Status Init(const PolicyContext& ctx) override;
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

  const HeteroDeployment& deployment() const { return deployment_; }
  const LatencyPredictor& predictor() const { return predictor_; }
  int64_t solves() const { return solves_; }

 private:
  struct InFlight {  // a dispatched query whose service time is not yet observed
    bool pending = false;
    TimePoint dispatched{};
    TimePoint prev_busy_until{};
    int rows = 0;
    VariantId variant = kNoId;
  };
  void ObserveLaunches(const std::vector<WorkerView>& workers);
  // Whether a busy instance (of the current columns) would finish `q` by its deadline.
  bool BetterWhenBusyFrees(const Query& q, const std::vector<WorkerView>& workers,
                           TimePoint now) const;

  // Whether some instance of the current columns serves model `task` (this decision).
  bool Servable(TaskId task, const std::vector<WorkerView>& workers);

  Options options_;
  LatencyPredictor predictor_;
  HeteroDeployment deployment_;
  const ProfileSuite* suite_ = nullptr;
  LinearAssignment solver_;
  std::vector<InFlight> inflight_;
  // Per-decision scratch.
  std::vector<size_t> cols_;  // worker index per column
  std::vector<Duration> remaining_;
  std::vector<double> cost_;
  std::vector<uint8_t> penalized_;
  std::vector<uint8_t> excluded_;  // the pair's instance does not serve the query's model
  std::vector<int> match_;
  std::vector<uint32_t> rows_;   // pending position per row
  std::vector<uint8_t> served_;  // by TaskId: Servable's answer, valid when stamped
  std::vector<uint64_t> served_stamp_;
  uint64_t decision_ = 0;  // Assign calls so far
  int64_t solves_ = 0;
};

}  // namespace sloserve

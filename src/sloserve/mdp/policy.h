#pragma once
// A RAMSIS model-selection policy for one worker: a table from (queued, discretized head
// slack) to (variant, batch), generated offline by value iteration on the per-worker MDP,
// with its expected accuracy and SLO violation rate (RAMSIS sections 4-5;
// docs/ramsis-mdp.md). Decide() is a table lookup: no clock, no allocation.
#include <string>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/mdp/options.h"

namespace sloserve {
class ProfileSuite;
}

namespace sloserve::mdp {

struct Action {
  VariantId variant = kNoId;  // kNoId: nothing to do (empty queue)
  int batch = 0;              // queries to take (earliest deadlines first)
  bool operator==(const Action& o) const { return variant == o.variant && batch == o.batch; }
};

// Everything a policy holds; a Policy is an immutable PolicyData.
struct PolicyData {
  std::string key;  // CacheKey(..., include_load = true)
  std::string suite, hardware, task;
  std::vector<std::string> variant_names;  // the MDP's variants (fastest first)
  std::vector<VariantId> variant_ids;      // parallel; suite ids
  Duration slo{};
  int workers = 1;
  ArrivalModel arrival;
  double load_qps = 0;
  Discretization discretization;
  BatchingKind batching = BatchingKind::kMaximal;
  int max_queue = 32;
  double latency_quantile = 0.95;
  Criterion criterion = Criterion::kAccuracyPerQuery;
  std::vector<int64_t> levels_us;  // slack levels T_j
  std::vector<Action> table;       // [(n - 1) * levels + j], n = 1..max_queue
  Action full_action;              // the full-queue state (more than max_queue queued)
  // Expectations (section 5.1) and solver facts.
  double expected_accuracy = 0;   // per satisfied query, %
  double expected_violation = 0;  // fraction of served queries in batches missing the SLO
  double accuracy_per_query = 0;  // violations counted as 0 (the optimised quantity), %
  double full_state_probability = 0;
  bool overloaded = false;  // load/worker above the best throughput within the SLO
  bool converged = false;
  int sweeps = 0;
  std::string notes;  // pruned variants, overload warning, ...
};

class Policy {
 public:
  Policy() = default;
  explicit Policy(PolicyData data);

  // queued >= 1: the action for `queued` queries whose earliest deadline is `head_slack`
  // away (negative: already late). More than max_queue queued: the full-state action.
  Action Decide(int queued, Duration head_slack) const;
  // The slack level of a slack (largest j with levels[j] <= slack; 0 if none). O(1).
  int LevelOf(Duration head_slack) const;

  double load_qps() const { return d_.load_qps; }
  double expected_accuracy() const { return d_.expected_accuracy; }
  double expected_violation() const { return d_.expected_violation; }
  bool overloaded() const { return d_.overloaded; }
  int max_queue() const { return d_.max_queue; }
  int num_levels() const { return static_cast<int>(d_.levels_us.size()); }
  const PolicyData& data() const { return d_; }
  // The variant name of an id in this policy ("-" if not one of its variants).
  std::string VariantName(VariantId id) const;

 private:
  PolicyData d_;
  int64_t step_us_ = 0;  // FLD level width (0: not uniform, binary search)
};

struct Evaluation {
  double expected_accuracy = 0;       // per satisfied query, % (section 5.1)
  double expected_violation = 0;      // fraction of served queries in batches missing the SLO
  double accuracy_per_query = 0;      // violations counted as 0, %
  double full_state_probability = 0;  // fraction of decision epochs in the full state
  double mean_batch = 0;              // queries per decision epoch
  int iterations = 0;
  bool converged = false;
  std::vector<double> stationary;  // per MDP state (0 = empty, ..., last = full)
};

// Builds the MDP for `options` and solves it. Loads beyond capacity still give a policy,
// marked overloaded() with a note (docs/ramsis-mdp.md#bad-input).
StatusOr<Policy> GeneratePolicy(const ProfileSuite& suite, const MdpOptions& options);
// The same with a warm start for value iteration (values of the same MDP at another load,
// from `values_out` of an earlier call; ignored if the size differs). Used by policy sets.
StatusOr<Policy> GeneratePolicy(const ProfileSuite& suite, const MdpOptions& options,
                                const std::vector<double>* warm_start,
                                std::vector<double>* values_out);
// Stationary distribution of the MDP of `options` under `policy` (which must have the
// same variants, queue bound and slack levels), and the expectations of section 5.1.
StatusOr<Evaluation> EvaluatePolicy(const ProfileSuite& suite, const MdpOptions& options,
                                    const Policy& policy);

class MdpModel;
// GeneratePolicy and EvaluatePolicy on a model already built (policy sets build each
// load's MDP once and evaluate a neighbouring load's policy in it).
StatusOr<Policy> PolicyFromModel(const ProfileSuite& suite, const MdpModel& model,
                                 const std::vector<double>* warm_start,
                                 std::vector<double>* values_out);
StatusOr<Evaluation> EvaluatePolicyInModel(const MdpModel& model, const Policy& policy);

// The expectations of a choice of pairs (model.pairs() index per state, -1 for empty).
// The choice must give every other state one of its own pairs; if not, the expectations
// are NaN and converged is false (see ChainStats::invalid_state).
Evaluation EvaluateChoice(const MdpModel& model, const std::vector<int>& choice,
                          const SolverOptions& options);

}  // namespace sloserve::mdp

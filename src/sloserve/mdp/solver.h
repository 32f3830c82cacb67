#pragma once
// Value iteration for the per-worker MDP (docs/ramsis-mdp.md#optimality-criterion) and the
// stationary distribution of the chain under a fixed choice of actions (section 5.1).
#include <cstdint>
#include <vector>

#include "sloserve/mdp/model.h"

namespace sloserve::mdp {

struct SolveResult {
  std::vector<int> choice;  // per state: index into model.pairs(); -1 for the empty state
  int sweeps = 0;
  bool converged = false;
  // kAccuracyPerQuery: bounds on the optimal long-run accuracy per served query (%).
  double gain_lo = 0, gain_hi = 0;
  std::vector<double> values;  // final relative values (kAccuracyPerQuery), per state
  // Pairs evaluated over all sweeps (sweeps x pairs without action elimination).
  int64_t pair_evaluations = 0;
};

// `initial_values` (optional, kAccuracyPerQuery only): warm start, e.g. the values of the
// same MDP at a nearby load (the state space does not depend on the load).
SolveResult Solve(const MdpModel& model, const SolverOptions& options,
                  const std::vector<double>* initial_values = nullptr);

// Stationary distribution (per decision epoch) of the chain under a fixed choice, by lazy
// power iteration from (1, SLO). The choice must be complete: every state s >= 1 needs one
// of its own pairs. Otherwise nothing is computed (invalid_state names the first bad state,
// stationary is all zero): a state without an action would leak probability mass, and the
// renormalised power iteration would silently return the chain conditioned on never
// reaching such a state (e.g. "always bert_tiny" at 1600 qps: 70.2 instead of 43.05).
struct ChainStats {
  std::vector<double> stationary;  // per state, per decision epoch
  int iterations = 0;
  bool converged = false;
  int invalid_state = -1;  // >= 0: the choice has no pair of this state
};
ChainStats Stationary(const MdpModel& model, const std::vector<int>& choice,
                      const SolverOptions& options);

}  // namespace sloserve::mdp

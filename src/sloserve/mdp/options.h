#pragma once
// Options of a RAMSIS per-worker MDP (docs/ramsis-mdp.md): which profile, SLO, worker
// count, arrival model, load, discretization, batching, queue bound, latency quantile and
// solver. One MdpOptions value (plus the suite) determines one policy; CacheKey() names it.
#include <atomic>
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"

namespace sloserve {
class ProfileSuite;
}

namespace sloserve::mdp {

enum class ArrivalKind { kPoisson, kGamma };
// Inter-arrival times at the central queue: exponential (Poisson) or Gamma with the given
// coefficient of variation (cv = 1 is Poisson; shape = 1/cv^2).
struct ArrivalModel {
  ArrivalKind kind = ArrivalKind::kPoisson;
  double cv = 1.0;
};

enum class DiscretizationKind { kModelBased, kFixedLength };
// MD: every distinct profiled latency <= SLO is a slack level (plus 0 and the SLO).
// FLD: levels 0, SLO/D, 2 SLO/D, ..., SLO (D + 1 levels; the authors use D = 100).
struct Discretization {
  DiscretizationKind kind = DiscretizationKind::kFixedLength;
  int d = 100;
};

enum class BatchingKind { kMaximal, kVariable };

// What value iteration optimises (docs/ramsis-mdp.md#optimality-criterion).
enum class Criterion {
  // Long-run accuracy per served query, SLO violations scoring 0: sum(acc*b*met)/sum(b),
  // solved to convergence by relative value iteration on the data-transformed SMDP.
  kAccuracyPerQuery,
  // The authors' artifact: undiscounted value iteration stopped after `fixed_sweeps`.
  kUndiscountedSweeps,
};

struct SolverOptions {
  Criterion criterion = Criterion::kAccuracyPerQuery;
  int max_sweeps = 20000;            // kAccuracyPerQuery: give up (and report) after this many
  double tolerance = 1e-4;           // kAccuracyPerQuery: stop when span bound < tolerance (acc %)
  int fixed_sweeps = 100;            // kUndiscountedSweeps
  int eval_max_iterations = 200000;  // power iteration of the stationary distribution
  double eval_tolerance = 1e-12;     // L1 change between power-iteration steps
  // Value iteration skips the pairs that provably cannot be a state's best in the next
  // sweeps (docs/ramsis-mdp.md#action-elimination); the results are bit-identical either
  // way. false (tests and benchmarks) evaluates every pair in every sweep. Not in cache keys.
  bool eliminate_actions = true;
  // Set (by a policy-set generation being cancelled): Solve and Stationary stop at their
  // next sweep, unconverged; the caller discards the result. Not part of any cache key.
  const std::atomic<bool>* cancel = nullptr;
};

struct MdpOptions {
  std::string task;                   // empty: the task of `variants`, or the suite's only task
  std::string hardware;               // empty: the suite's first hardware type
  std::vector<std::string> variants;  // empty: every variant of the task
  bool pareto_prune = true;           // drop variants off the accuracy/latency front
  Duration slo = Millis(150);
  int workers = 1;  // round-robin share: the worker gets every `workers`-th arrival
  ArrivalModel arrival;
  double load_qps = 0;  // arrival rate at the central queue (all workers), > 0
  Discretization discretization;
  BatchingKind batching = BatchingKind::kMaximal;
  int max_queue = 32;              // N: states n = 0..N plus the full-queue state
  double latency_quantile = 0.95;  // action latency = this quantile of the profile
  SolverOptions solver;
};

Status ValidateOptions(const MdpOptions& o);

// "poisson" / "gamma(cv=1.5)", "fld(D=100)" / "md", "maximal" / "variable".
std::string ArrivalName(const ArrivalModel& a);
std::string DiscretizationName(const Discretization& d);
std::string BatchingName(BatchingKind b);
std::string CriterionName(Criterion c);
StatusOr<ArrivalModel> ParseArrival(const std::string& kind, double cv);
StatusOr<Discretization> ParseDiscretization(const std::string& kind, int d);
StatusOr<BatchingKind> ParseBatching(const std::string& s);
StatusOr<Criterion> ParseCriterion(const std::string& s);

// The identity of one policy: suite, hardware, resolved variants, SLO, workers, arrival
// model, load, discretization, batching, queue bound, quantile and criterion. One line.
// `variant_names` are the variants after resolution and pruning (model order).
std::string CacheKey(const ProfileSuite& suite, const MdpOptions& o,
                     const std::vector<std::string>& variant_names, bool include_load);

}  // namespace sloserve::mdp

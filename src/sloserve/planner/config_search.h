#pragma once
// Online configuration searches (Kairos, HPDC'23, section 5.2 "Upper-bound-assisted
// search algorithm" and section 8.3): each evaluates configurations one at a time with
// a caller-supplied evaluator (in sloserve: a simulated allowable-throughput search) and
// records the order of evaluations, so the cost of finding the optimum is the number of
// evaluations made before it.
//
//   KairosPlusSearch   Algorithm 1: configurations in decreasing upper bound; after each
//                      evaluation drop those whose bound is below the best value so far,
//                      and the sub-configurations of the evaluated one. Ends when every
//                      configuration is evaluated or pruned.
//   RandomSearch       uniformly random order (RAND).
//   GeneticSearch      a steady-state genetic algorithm (GENE): tournament selection from
//                      the best evaluated, uniform crossover of counts, +-1 mutation,
//                      budget repair.
//   AnnealingSearch    simulated annealing over +-1 / swap-one-instance neighbours,
//                      acceptance exp(relative loss / T), geometric cooling, restarts.
// As in the paper's comparison, the baselines get the same sub-configuration pruning as
// Kairos+ (a configuration that can grow into an evaluated one is never evaluated: it
// cannot serve more). An evaluation of an already evaluated configuration is free.
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/policy/planning/instance_configs.h"

namespace sloserve {

using ConfigEvaluator = std::function<StatusOr<double>(const InstanceCounts&)>;

struct SearchOptions {
  uint64_t seed = 1;
  int64_t max_evaluations = 0;  // 0: no limit (until the space is exhausted)
  // Stop as soon as an evaluation reaches this value (used with a known optimum to count
  // evaluations to reach it without running the search to exhaustion).
  double stop_at = std::numeric_limits<double>::infinity();
  bool prune_subconfigs = true;
};

struct SearchEvaluation {
  InstanceCounts counts;
  double value = 0;
};

struct SearchResult {
  std::string method;
  std::vector<SearchEvaluation> evaluations;  // in evaluation order
  InstanceCounts best;
  double best_value = 0;
  int64_t pruned = 0;  // configurations removed without evaluation
  // 1-based number of evaluations until one reached `target`; 0 if none did.
  size_t EvaluationsToReach(double target) const;
};

// `configs` is the whole space (EnumerateConfigs); `bounds` parallel to it.
StatusOr<SearchResult> KairosPlusSearch(const std::vector<InstanceCounts>& configs,
                                        const std::vector<double>& bounds,
                                        const ConfigEvaluator& evaluate,
                                        const SearchOptions& options);
StatusOr<SearchResult> RandomSearch(const std::vector<InstanceCounts>& configs,
                                    const ConfigEvaluator& evaluate, const SearchOptions& options);
StatusOr<SearchResult> GeneticSearch(const ConfigSpace& space,
                                     const std::vector<InstanceCounts>& configs,
                                     const ConfigEvaluator& evaluate, const SearchOptions& options);
StatusOr<SearchResult> AnnealingSearch(const std::vector<InstanceCounts>& configs,
                                       const ConfigEvaluator& evaluate,
                                       const SearchOptions& options);

// Names accepted by RunConfigSearch: kairos+, random, genetic, annealing.
const std::vector<std::string>& ConfigSearchMethods();
StatusOr<SearchResult> RunConfigSearch(const std::string& method, const ConfigSpace& space,
                                       const std::vector<InstanceCounts>& configs,
                                       const std::vector<double>& bounds,
                                       const ConfigEvaluator& evaluate,
                                       const SearchOptions& options);

}  // namespace sloserve

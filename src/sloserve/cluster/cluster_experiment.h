#pragma once
// A model-aware placement experiment: a sim config with a `cluster:` section (schema:
// docs/model-aware.md). Policies x sweep points x seeds, each a RunCluster; one row per
// (sweep point, policy), averaged over the seeds.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sloserve/cluster/cluster_sim.h"
#include "sloserve/core/declared_key.h"
#include "sloserve/core/status.h"

namespace sloserve {

struct ClusterRow {
  std::string policy;
  std::vector<std::pair<std::string, std::string>> point;  // sweep key -> value
  int runs = 0;
  int requests = 0;
  int refused = 0;
  double cold_starts = 0;  // mean over runs
  int cold_starts_min = 0, cold_starts_max = 0;
  double prefetch_loads = 0, evictions = 0;
  double makespan_s = 0, mean_latency_s = 0, p50_latency_s = 0, p99_latency_s = 0;
  int chose_colocation = 0, chose_queue = 0, chose_registry = 0;  // adaptive, summed
  // With `break_even_s`: the first N from which the mean latency of the first N requests
  // stays within break_even_s of the first policy's (seed 1); -1 = never in the run.
  int64_t break_even_requests = -1;
  ClusterResult first_run;  // the seed-`seed` run, for records and tests
};

struct ClusterExperiment {
  std::string name;
  std::vector<ClusterRow> rows;
};

// Every key of a cluster experiment, declared (docs/model-aware.md).
const std::vector<const KeyDecl*>& ClusterExperimentDecls();
// Their dotted names ("cluster.machines"), and the section names cluster and workload.
const std::set<std::string>& ClusterExperimentKeys();
// True when the YAML text is a model-aware placement experiment (has `cluster:`).
bool IsClusterExperiment(const std::string& yaml_text);
// Parses, applies `key=value` overrides (dotted keys into the YAML; a value [a,b] is a
// list), and runs every policy at every sweep point.
StatusOr<ClusterExperiment> RunClusterExperiment(const std::string& yaml_text,
                                                 const std::string& origin,
                                                 const std::vector<std::string>& sets);

}  // namespace sloserve

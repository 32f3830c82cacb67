#pragma once
// Experiment configs for `sloserve sim` (schema: docs/sim.md). A YAML file is flattened
// into dotted keys ("workload.load_qps"), `--set key=value` overrides apply to those
// keys, and every list under `sweep:` (plus an optional `policies:` list) expands into
// the cartesian product of runs. Unknown keys are errors, so typos do not pass.
#include <map>
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/sim/run_spec.h"

namespace sloserve {

using FlatConfig = std::map<std::string, std::string>;

struct ExperimentConfig {
  std::string name;
  FlatConfig base;                                                      // scalar settings
  std::vector<std::pair<std::string, std::vector<std::string>>> sweep;  // key -> values
  std::vector<FlatConfig> policies;                                     // each: policy.* keys
};

// Parses YAML text; `origin` names the file in errors.
StatusOr<ExperimentConfig> ParseExperimentConfig(const std::string& yaml_text,
                                                 const std::string& origin);
StatusOr<ExperimentConfig> LoadExperimentConfig(const std::string& path);
// Applies "key=value" overrides; a value "[a,b,c]" turns the key into a sweep axis.
Status ApplyOverrides(ExperimentConfig* config, const std::vector<std::string>& sets);
// Expands sweeps and policies into resolved runs, in a stable order.
StatusOr<std::vector<RunSpec>> ExpandRuns(const ExperimentConfig& config);
// Builds one run from flat keys. `serve` shares the keys but has no workload section,
// so it passes with_workload = false.
StatusOr<RunSpec> RunSpecFromFlat(const FlatConfig& flat, bool with_workload = true);
// Every key the schema accepts, with a one-line description (for --help and docs).
const std::vector<std::pair<std::string, std::string>>& ConfigKeys();

}  // namespace sloserve

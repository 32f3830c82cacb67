#pragma once
// Experiment configs for `sloserve sim` and `serve` (every key: docs/config.md). A YAML
// file is flattened into dotted keys ("workload.load_qps"), `--set key=value` overrides
// apply to those keys, and every list under `sweep:` (plus an optional `policies:` list)
// expands into the cartesian product of runs. Every key must be declared
// (config_keys.h), so typos do not pass.
#include <map>
#include <string>
#include <vector>

#include "sloserve/config/flat_config.h"
#include "sloserve/config/run_config.h"
#include "sloserve/config/run_spec.h"
#include "sloserve/core/status.h"

namespace sloserve {

// Where a key was written: 1-based line and column (0 = not from a file, e.g. --set).
struct SourceMark {
  int line = 0;
  int column = 0;
};

struct ExperimentConfig {
  std::string name;
  std::string origin;                                                   // the file
  FlatConfig base;                                                      // scalar settings
  std::vector<std::pair<std::string, std::vector<std::string>>> sweep;  // key -> values
  std::vector<FlatConfig> policies;                                     // each: policy.* keys
  // `models:` (docs/multi-model.md): each entry's keys as written in it ("name",
  // "workload.load_qps", "policy.batching"); empty = the one `task`.
  std::vector<FlatConfig> models;
  // Where each key was written: "key" for base keys, "sweep.key" for sweep axes (and
  // "sweep.key[i]" for their values), "policies[i].key" for entries of the list,
  // "models[i].key" for those of `models:`.
  std::map<std::string, SourceMark> marks;
};

// Parses YAML text; `origin` names the file in errors. Refuses unknown keys.
StatusOr<ExperimentConfig> ParseExperimentConfig(const std::string& yaml_text,
                                                 const std::string& origin);
// The same without the key check: `config check` reports every key's errors itself.
StatusOr<ExperimentConfig> ParseExperimentStructure(const std::string& yaml_text,
                                                    const std::string& origin);
StatusOr<ExperimentConfig> LoadExperimentConfig(const std::string& path);
// A config file is read whole up to this size: a config is kilobytes, and a stream such
// as /dev/zero would otherwise never end.
inline constexpr size_t kMaxConfigFileBytes = size_t{8} << 20;
// The text of a config file; a directory, a file that cannot be opened and one above
// kMaxConfigFileBytes are errors naming the path ("PATH: is a directory, not a config file").
StatusOr<std::string> ReadConfigFile(const std::string& path);
// Applies "key=value" overrides; a value "[a,b,c]" turns the key into a sweep axis.
Status ApplyOverrides(ExperimentConfig* config, const std::vector<std::string>& sets);
// Expands sweeps and policies into resolved runs, in a stable order.
StatusOr<std::vector<RunSpec>> ExpandRuns(const ExperimentConfig& config);
// Unknown key `key`: the message with a did-you-mean and the keys of its section.
Status UnknownConfigKey(const std::string& what, const std::string& key);
// "file:line:col" of `mark_key` in `config`, or the file alone when unknown.
std::string WhereIs(const ExperimentConfig& config, const std::string& mark_key);
// Policy option keys of a `policies:` entry or the base that the entry's policies take.
bool PolicyTakesOption(const PolicySpec& policy, const std::string& option);

}  // namespace sloserve

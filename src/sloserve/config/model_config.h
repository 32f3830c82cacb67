#pragma once
// `models:` in a config: the models of a multi-model deployment (docs/multi-model.md).
// Each entry of the list is a mapping whose keys are declared here (name, task, variants,
// copies, slo_ms, share, priority, its own workload.* and policy.batching/selection with
// their options); `popularity.zipf_s` spreads the run's workload over the models that
// take a share of it. Without `models:` a config means what it always meant.
#include <string>
#include <vector>

#include "sloserve/config/flat_config.h"
#include "sloserve/config/run_spec.h"
#include "sloserve/core/declared_key.h"

namespace sloserve {

// The keys of one entry, named as written inside it ("name", "workload.load_qps"); an
// entry's other policy.* keys are policy options (sloserve policies --describe NAME).
const std::vector<const KeyDecl*>& ModelEntryKeys();
// Top-level keys of multi-model deployments (popularity.zipf_s).
const std::vector<const KeyDecl*>& ModelDeploymentKeys();
// One key of an entry and its value ("" = unset): unknown keys (with a did-you-mean),
// pool-wide policy keys, values out of range.
Status CheckModelEntryKey(const std::string& key, const std::string& value);
// The entry has an arrival process of its own (a workload.* key).
bool HasOwnArrival(const FlatConfig& entry);

// The models of a run: each entry checked, its copies expanded ("NAME#1".."NAME#N"), its
// share of the run's workload resolved (given, else Zipf or equal over the rest), its
// policy the run's with its overrides. `base` is the run's flat config (duration_s, the
// config's folder, popularity.zipf_s); `run` the run built from it.
StatusOr<std::vector<ModelSpec>> ModelsFromFlat(const std::vector<FlatConfig>& entries,
                                                const FlatConfig& base, const RunSpec& run);

}  // namespace sloserve

#pragma once
// The keys of one run (deployment, workload, executor, engine and the policy's names),
// declared here next to RunSpecFromFlat, which reads them (docs/config.md).
#include <vector>

#include "sloserve/config/flat_config.h"
#include "sloserve/config/run_spec.h"
#include "sloserve/core/declared_key.h"

namespace sloserve {

// Every key of a run, in the order docs/config.md lists them.
const std::vector<const KeyDecl*>& RunKeys();
// The keys of an arrival process (workload.arrival, workload.load_qps, ...): a run's
// `workload:` and a model's own (docs/multi-model.md).
const std::vector<const KeyDecl*>& ArrivalKeys();
// `slo_ms`, whose range a model's slo_ms shares.
const KeyDecl& SloMsKey();
// The policy's names (policy.dispatch, ...); the policies' options are declared by each
// policy (PolicyRegistry::AllOptions).
const std::vector<const KeyDecl*>& PolicyNameKeys();
// `sloserve plan kairos`'s keys (plan.*).
const std::vector<const KeyDecl*>& PlanKeys();
extern const KeyDecl kPlanBudgetKey;
extern const KeyDecl kPlanMaxInstancesKey;

// A suite as a config names it (`suite:`, `models[i].suite`): a path (it has a '/' or
// ends in .prof) relative to the config's folder, else an embedded or synthetic name as is.
std::string SuiteOfConfig(const std::string& suite, const FlatConfig& flat);
// A file or directory a config names, relative to the config's folder (as given when it is
// not there).
std::string PathOfConfig(const std::string& path, const FlatConfig& flat);

// A configured SLO in ms as a Duration: 0 stays 0 (not set: the task's default); a
// positive value below the 1 us resolution is 1 us, not 0, so it is refused as an
// impossible SLO (as the server does a request's slo_ms) instead of read as not set.
Duration SloOfMillis(double slo_ms);

// The policy's names (policy.dispatch, ...) of `flat`, without options.
PolicySpec PolicyNamesFromFlat(const FlatConfig& flat);

// The arrival process of the workload.* keys of `flat` (and its duration_s), not yet
// validated (ValidateArrivalSpec): a serve config has none.
StatusOr<ArrivalSpec> ArrivalSpecFromFlat(const FlatConfig& flat);

// Builds one run from flat keys. `serve` shares the keys but has no workload section,
// so it passes with_workload = false.
StatusOr<RunSpec> RunSpecFromFlat(const FlatConfig& flat, bool with_workload = true);

}  // namespace sloserve

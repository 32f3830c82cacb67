#pragma once
// Suite names as configs write them: an embedded suite ("ramsis-image"), a path to a
// .prof file, or a synthetic Pareto suite built on the fly from an embedded one:
// "synthetic:ramsis-image" (RAMSIS appendix E: its 9 Pareto models interpolated every
// 0.5 accuracy points, 60 models) or "synthetic:BASE:STEP:v1,v2,..." for another front.
#include <string>

#include "sloserve/config/run_spec.h"
#include "sloserve/core/status.h"
#include "sloserve/profile/profile.h"
#include "sloserve/profile/suite_composition.h"

namespace sloserve {

StatusOr<ProfileSuite> ResolveSuite(const std::string& name);

// The suite a run serves: its `suite:`, or with `models:` the suite composed from them
// (profile/suite_composition.h: task i = models[i], from the suite it names or the run's),
// each model's SLO checked against its fastest variant on the pool's hardware ("impossible
// SLO", naming the model). The run's `hardware_prices:` replace the suites' prices.
StatusOr<ProfileSuite> ResolveRunSuite(const RunSpec& spec);
// The suites a run's models come from, as RunSpec names them: the run's `suite:` first when
// a model takes it (has no `suite:` of its own), then the models' own, in the order first
// named. Empty without `models:`.
std::vector<std::string> RunSuiteNames(const RunSpec& spec);
// The models a run composes its suite from (empty without `models:`); their `suite` indexes
// RunSuiteNames(spec).
std::vector<ComposedModel> ComposedModelsOf(const RunSpec& spec);
// Runs with equal keys resolve to the same suite (sweeps share one).
std::string RunSuiteKey(const RunSpec& spec);

}  // namespace sloserve

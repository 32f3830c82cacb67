#pragma once
// Multi-model deployments (docs/multi-model.md): one profile suite in which every model
// of a deployment is a task of its own. A model deploys a task of a base suite (or some
// of its variants) under its own name; its variants are renamed "MODEL/VARIANT", so two
// models made from the same task (copies: "t5-small#1", "t5-small#2") are distinct
// everywhere the engine keys by task or variant: queues, residency, memory, cold starts.
// The models may come from several base suites (`models[i].suite`); the composed suite's
// hardware types are theirs, united by name. The latency samples are shared with the
// base suites, not copied (LatencyDistribution).
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct ComposedModel {
  std::string name;                   // the model's task name in the composed suite
  std::string task;                   // a task of its base suite; "" = its first
  std::vector<std::string> variants;  // the task's variants it deploys; empty = all
  Duration slo{};                     // the composed task's default SLO; 0 = the base task's
  size_t suite = 0;                   // its base suite: an index into ComposeSuite's `bases`
  std::string origin;                 // names the model in errors, e.g. "models[2]"
};

// The variant name of `variant` in model `model`: "MODEL/VARIANT".
std::string ComposedVariantName(const std::string& model, const std::string& variant);

// Task i of the result is models[i], made from bases[models[i].suite]. Its hardware types
// are those of the bases some model comes from, united by name in the order of `bases`
// (so one base's types keep their ids); a type two bases share must agree on price, cores
// and memory. Each variant keeps its latency, load, capacity and execution-time records
// on the types its own suite profiled, and none on the others. Errors name the model's
// origin and key: an unknown task or variant (with a did-you-mean), a variant of another
// task, a duplicate model name, a model name with a '/', a shared type that differs
// ("models[2].suite: ..." naming both suites and the field).
StatusOr<ProfileSuite> ComposeSuite(const std::vector<const ProfileSuite*>& bases,
                                    const std::vector<ComposedModel>& models);
// Every model from the one suite `base` (their `suite` must be 0).
StatusOr<ProfileSuite> ComposeSuite(const ProfileSuite& base,
                                    const std::vector<ComposedModel>& models);

}  // namespace sloserve

#pragma once
// One simulation run, fully resolved: everything the simulator needs and nothing it has
// to look up in a config again. Built by the experiment config (config.h).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sloserve/core/time.h"
#include "sloserve/engine/deployment.h"
#include "sloserve/exec/service_time_model.h"
#include "sloserve/policy/policy_spec.h"
#include "sloserve/workload/arrival_spec.h"

namespace sloserve {

// One model of a multi-model deployment (`models:` in a config, docs/multi-model.md),
// after `copies:` expanded it: a task of its suite served under its own name, with
// its own variants, SLO, load, priority and (optionally) batching and selection policies.
struct ModelSpec {
  std::string name;  // the served model name, unique in the run
  // The suite it comes from, as the run's `suite:` is named (a path resolved against the
  // config's folder); "" = the run's `suite:`.
  std::string suite;
  std::string task;  // a task of its suite
  // A LibTorch model repository holding `task` (models[i].repository; resolved), or "".
  // Its `suite` is then the task's measured profile; serve runs its variants with LibTorch.
  std::string repository;
  std::vector<std::string> variants;  // the task's variants it deploys; empty = all
  Duration slo{};                     // 0 = the task's default SLO
  // Its own arrival process, or none: it takes `share` of the run's `workload:`.
  std::optional<ArrivalSpec> arrival;
  double share = 0;      // fraction of the run's workload (resolved; 0 with its own arrival)
  int32_t priority = 0;  // admission level of its queries; 0 = the app's or the default
  // Its batching/selection where they differ from the pool's (dispatch, placement and
  // planning stay the run's); none = the run's policy.
  std::optional<PolicySpec> policy;
  // Where it was written, for errors: "models[2]" (a copy: "models[2] (copy 3)").
  std::string origin;
};

struct RunSpec {
  std::string suite = "ramsis-image";
  std::string task;      // default: the suite's first task
  std::string hardware;  // default: the suite's first hardware type
  // Stated prices ($/h) by hardware type, replacing the suite's (`hardware_prices:`).
  std::map<std::string, double> hardware_prices;
  int workers = 1;
  std::string preload = "all";  // variants resident at start: all | none | v1,v2,...
  int workers_per_machine = 1;  // consecutive workers sharing a machine (its memory)
  Duration slo{};               // default: the task's default SLO
  // Multiple SLOs (RAMSIS appendix G): each query's SLO drawn from (slo, weight) pairs;
  // empty = every query gets `slo`.
  std::vector<std::pair<Duration, double>> slo_mix;
  uint64_t seed = 1;
  ArrivalSpec arrival;
  std::string sizes = "constant:1";
  // Weight of each app (AppId = index in the suite's exec_hist app order) among arrivals;
  // empty = equal weights over the suite's apps (app 0 when it has none).
  std::vector<double> app_weights;
  // Priority of each app's queries (index = AppId; 1 = highest, 0 = the default level);
  // empty = every query the default (docs/admission.md).
  std::vector<int32_t> app_priorities;
  ServiceTimeOptions service;
  PolicySpec policy;
  size_t max_worker_queue = 1'000'000;
  // Admission control (docs/admission.md): unset = the face's default (sim off, serve on).
  std::optional<bool> admission;
  int64_t admission_queue = 0;   // bound on queued rows; 0 = capacity x SLO
  int32_t priority_levels = 2;   // admission classes (1 = highest)
  int32_t priority_default = 1;  // level of a query that names none
  Duration series_interval = Seconds(1);
  // Also compute each series interval's p99 latency (RunResult::series_p99_ms). Keeps every
  // completed query's latency until the run ends, so only `sim --series` turns it on.
  bool series_latency = false;
  Duration plan_interval = Seconds(1);  // planning policy tick (when one is configured)
  // Virtual time an offline job (e.g. generating a missing RAMSIS policy) takes before its
  // result reaches the policy; 0 = at once.
  Duration offline_delay{};
  // Multi-model deployments: the models the pool serves (docs/multi-model.md); empty = the
  // one `task`. The run's suite is then composed from them (ComposeSuite), one task each,
  // from the suites they come from.
  std::vector<ModelSpec> models;
  // Swept / labelled parameters echoed into the result row (name -> value as text).
  std::map<std::string, std::string> labels;
};

// The deployment a run asks for (task, hardware, workers, SLO, preloads, machines),
// before ResolveDeployment looks its names up in the suite.
inline DeploymentSpec DeploymentSpecOf(const RunSpec& spec) {
  DeploymentSpec d;
  d.task = spec.task;
  d.hardware = spec.hardware;
  d.workers = spec.workers;
  d.slo = spec.slo;
  d.preload = spec.preload;
  d.workers_per_machine = spec.workers_per_machine;
  return d;
}

}  // namespace sloserve

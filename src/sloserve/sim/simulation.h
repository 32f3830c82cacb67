#pragma once
// The trace-driven simulator: a virtual clock, the arrival process, the engine and the
// simulated executor, driven in strict time order (completions, then timers, then
// arrivals at equal times). Deterministic for a fixed seed. Runs until the arrival
// process ends and every accepted query has completed or been dropped.
#include <functional>
#include <memory>
#include <vector>

#include "sloserve/config/run_spec.h"
#include "sloserve/engine/metrics.h"
#include "sloserve/engine/query_record.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

class Engine;

// One model's outcome in a multi-model run (docs/multi-model.md).
struct ModelResult {
  std::string name;        // the served model name
  std::string task;        // the suite task it deploys
  double load_qps = 0;     // its mean offered load
  double share = 0;        // its share of the run's workload (0: a workload of its own)
  Duration slo{};          // its SLO
  int32_t priority = 0;    // its admission level (0 = default)
  std::string policy;      // its batching/selection where they differ, else ""
  MetricsSummary summary;  // its queries only; cold starts = loads of its variants
};

struct RunResult {
  RunSpec spec;
  double load_qps = 0;  // mean offered load of the arrival process
  MetricsSummary summary;
  std::vector<IntervalStats> series;
  Duration series_interval{};
  // p99 latency (ms) of the completed queries that arrived in each series interval,
  // parallel to `series`; empty unless spec.series_latency.
  std::vector<double> series_p99_ms;
  // Multi-model runs: one entry per model, in spec.models order (their counts sum to
  // the summary's); empty for a single-model run.
  std::vector<ModelResult> models;
  int64_t events = 0;  // arrivals + completions + timer wake-ups processed
  double wall_s = 0;   // wall time of the run
};

struct SimHooks {
  // Every finished query, in completion order (optional; e.g. --records).
  std::function<void(const QueryRecord&)> on_record;
  // Called once with the engine before the run starts, so a test can watch its workers
  // and policies (e.g. from on_record); the engine lives until RunSimulation returns.
  std::function<void(const Engine&)> on_engine;
  // Fraction of the arrival horizon simulated so far, called about 100 times per run.
  std::function<void(double)> on_progress;
};

// `suite` is the run's (ResolveRunSuite: composed from spec.models when it has some).
StatusOr<RunResult> RunSimulation(const RunSpec& spec, const ProfileSuite& suite,
                                  const SimHooks& hooks = {});

}  // namespace sloserve

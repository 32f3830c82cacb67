#pragma once
// Per-model results of multi-model runs (docs/multi-model.md): JSON rows with a `model`
// field, next to the run's total row (`model: "all"`), and a text table per run.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sloserve/sim/simulation.h"

namespace sloserve {

// The rows of run `index` for `sim --json`: a single-model run's one row as RunRowJson
// gives it (unchanged); a multi-model run's total row (model "all", the run's `run`
// index) followed by one row per model with the run's parameters, the model's own
// (model, task, load_qps, share, slo_ms, priority, model_policy) and its metrics.
std::vector<nlohmann::json> RunRowsJson(const RunResult& r, size_t index);
// {"experiment": name, "rows": [...], "series": [...] (only with include_series)}, with
// every multi-model run's per-model rows after its total.
nlohmann::json RunsWithModelsJson(const std::string& experiment, const std::vector<RunResult>& runs,
                                  bool include_series);
// One table per multi-model run ("" when there are none): its label, then per model
// load, SLO, violation and finish rates, latency percentiles, cold starts.
std::string ModelTables(const std::vector<RunResult>& runs);

}  // namespace sloserve

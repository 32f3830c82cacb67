#pragma once
// Simulation results as a text table, CSV, or JSON whose `rows` is a flat list (one row
// per run: its parameters and metrics under the names documented in docs/metrics.md),
// so results load straight into a dataframe.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sloserve/sim/simulation.h"

namespace sloserve {

// The metrics of one run or of a live server, under the documented names.
nlohmann::json SummaryJson(const MetricsSummary& m);
std::string SummaryText(const MetricsSummary& m);
nlohmann::json RunRowJson(const RunResult& r);
// {"experiment": name, "rows": [...], "series": [...] (only with include_series)}
nlohmann::json RunsJson(const std::string& experiment, const std::vector<RunResult>& runs,
                        bool include_series);
std::string RunsTable(const std::vector<RunResult>& runs);
std::string RunsCsv(const std::vector<RunResult>& runs);

}  // namespace sloserve

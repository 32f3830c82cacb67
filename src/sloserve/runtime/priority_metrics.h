#pragma once
// The per-priority admission counters of GET /metrics (docs/metrics.md "Prometheus"):
// every level 1..engine.priority_levels is exported, at 0 until a query of that level
// ends, so the label set is fixed by the configuration (at most 16 levels x 2 reasons).
#include <string>
#include <vector>

#include "sloserve/engine/metrics.h"

namespace sloserve {

// Appends, in the Prometheus text format:
//   sloserve_queries_shed_by_priority_total{priority, reason="shed"|"queue_full"}
//   sloserve_queries_ended_by_priority_total{priority}
//   sloserve_queries_met_by_priority_total{priority}
// for the levels of `levels` (MetricsCollector::PriorityCounts).
void AppendPriorityMetrics(const std::vector<PriorityStats>& levels, std::string& out);

}  // namespace sloserve

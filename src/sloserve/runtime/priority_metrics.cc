#include "sloserve/runtime/priority_metrics.h"

#include <cstdio>

namespace sloserve {

void AppendPriorityMetrics(const std::vector<PriorityStats>& levels, std::string& out) {
  auto header = [&](const char* name, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
  };
  auto sample = [&](const char* name, int32_t level, const char* reason, int64_t value) {
    char buf[160];
    if (reason != nullptr) {
      std::snprintf(buf, sizeof buf, "%s{priority=\"%d\",reason=\"%s\"} %lld\n", name, level,
                    reason, static_cast<long long>(value));
    } else {
      std::snprintf(buf, sizeof buf, "%s{priority=\"%d\"} %lld\n", name, level,
                    static_cast<long long>(value));
    }
    out += buf;
  };
  header("sloserve_queries_shed_by_priority_total",
         "Queries refused by admission control (429), by priority level (1 = highest) and "
         "reason: shed = the SLO could not be met behind the queue (or the queue bound), "
         "queue_full = server.max_queue.");
  for (const PriorityStats& p : levels) {
    sample("sloserve_queries_shed_by_priority_total", p.level, "shed", p.shed - p.queue_full);
    sample("sloserve_queries_shed_by_priority_total", p.level, "queue_full", p.queue_full);
  }
  header("sloserve_queries_ended_by_priority_total",
         "Queries that ended (met, late or dropped), by priority level.");
  for (const PriorityStats& p : levels)
    sample("sloserve_queries_ended_by_priority_total", p.level, nullptr, p.arrived);
  header("sloserve_queries_met_by_priority_total",
         "Queries that met their SLO, by priority level.");
  for (const PriorityStats& p : levels)
    sample("sloserve_queries_met_by_priority_total", p.level, nullptr, p.met);
}

}  // namespace sloserve

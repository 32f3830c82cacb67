#pragma once
// Multiple latency SLOs (RAMSIS appendix G): workers are split into SLO classes, each
// with its own central queue share and (for RAMSIS) its own policies. Written as the
// option `slo_workers`, e.g. "150:30,300:30": 30 workers serve SLO 150 ms, the next 30
// serve 300 ms. A query belongs to the class whose SLO is nearest its own.
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"

namespace sloserve {

struct SloClass {
  Duration slo{};
  size_t first_worker = 0;
  size_t workers = 0;
};

// Counts must sum to `total_workers`; errors name the text.
StatusOr<std::vector<SloClass>> ParseSloClasses(const std::string& text, size_t total_workers);
// Index of the class whose SLO is nearest `slo` (ties: the class listed first).
size_t NearestSloClass(const std::vector<SloClass>& classes, Duration slo);

}  // namespace sloserve

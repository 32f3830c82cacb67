#pragma once
// Several models driven at once (issue 31: `sloserve loadgen --models a:0.7,b:0.3`): one
// open-loop run per model (RunLoad, each on its own thread with its own connections and
// schedule), started together, and their reports side by side with the totals.
//
// Totals (MergeLoadReports): counts, errors and variant counts summed; latency
// percentiles over every model's OK responses together; SLO attainment over every sent
// request, each judged against its own model's SLO (the client-side attainment only when
// every model has a client-side SLO); offered and achieved rates summed over the common
// run; the client-bottleneck verdict of any model, its warnings named by model.
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/loadgen/load_generator.h"
#include "sloserve/loadgen/load_report.h"

namespace sloserve {

// At most this many models per run (each has a thread and connections of its own).
inline constexpr size_t kMaxLoadModels = 64;

struct ModelLoadReport {
  std::string model;
  double share = 0;  // of the offered load
  LoadReport report;
};

struct MultiModelReport {
  std::vector<ModelLoadReport> models;  // in the order given
  LoadReport total;

  // {"models":[{"model":"a","share":0.7, ...report...}, ...], "total":{...report...}}: each
  // row is LoadReport::ToJson with the fields `model` and `share`.
  nlohmann::json ToJson() const;
  // A header per model ("model a (share 0.70)") with its report, then "total".
  std::string ToText() const;
};

// The totals of several runs over the same period (above).
LoadReport MergeLoadReports(const std::vector<ModelLoadReport>& reports);

// Runs every model's load at once (each `options[i].task` with its own schedule) and waits
// for all. `progress(i, p)` is called from model i's thread. Errors: the first model's that
// failed (InvalidArgument for bad options, Unavailable for an unreachable server), or
// InvalidArgument for none or more than kMaxLoadModels models.
StatusOr<MultiModelReport> RunMultiModelLoad(
    const std::vector<LoadOptions>& options, const std::vector<double>& shares,
    const std::function<void(size_t, const LoadProgress&)>& progress = {});

}  // namespace sloserve

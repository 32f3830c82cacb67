#pragma once
// Turns an arrival process (the same ones the simulator uses) into the send schedule of
// the open-loop load generator, and summarizes a load report's accuracy from a suite.
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/loadgen/load_report.h"
#include "sloserve/profile/profile.h"
#include "sloserve/workload/arrival_spec.h"

namespace sloserve::cli {

StatusOr<std::vector<Duration>> BuildSchedule(const ArrivalSpec& spec, uint64_t seed);
// Rows of the requests scheduled at `schedule`'s offsets, drawn by the query-size sampler
// `spec` (workload.sizes names: constant:N, deeprecsys, gaussian:MEAN:SD,
// switch:S:SPEC/SPEC) from the simulator's own stream, so the same seed gives a live run
// the same sizes, in the same order, as `sloserve sim`.
StatusOr<std::vector<int32_t>> DrawQuerySizes(const std::string& spec,
                                              const std::vector<Duration>& schedule, uint64_t seed);
// Mean accuracy (%) of the variants that answered, weighted by responses; -1 when the
// suite knows none of them.
double MeanAccuracy(const LoadReport& report, const ProfileSuite& suite);

}  // namespace sloserve::cli

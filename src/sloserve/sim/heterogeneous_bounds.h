#pragma once
// Run-level inputs of Kairos' analytic bounds (HPDC'23): the instance mix of a run, its
// QoS target and served variant, a sample of its query sizes, and the Oracle bound
// (section 7) of a mix. Shared by `sloserve kairos throughput` and `sloserve plan
// kairos`, so both resolve a run the same way the simulator does.
#include <string_view>
#include <utility>
#include <vector>

#include "sloserve/config/run_spec.h"
#include "sloserve/core/ids.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

using InstanceMix = std::vector<std::pair<HardwareId, int>>;

struct HeteroRunInfo {
  TaskId task = 0;
  Duration qos{};             // the run's SLO, else the task's default
  VariantId variant = kNoId;  // the task's most accurate variant (as `fixed` picks it)
};

StatusOr<HeteroRunInfo> ResolveHeteroRun(const RunSpec& run, const ProfileSuite& suite);
// "type:count,type:count" (or "type" with `workers`) -> (hardware id, count).
StatusOr<InstanceMix> ParseInstanceMix(const RunSpec& run, const ProfileSuite& suite);
// `n` sizes from the run's size distribution, seeded by (run.seed, stream).
StatusOr<std::vector<int>> SampleQuerySizes(const RunSpec& run, int64_t n, std::string_view stream);
// The Oracle bound (queries/s) of `mix` for the run's task, QoS and size distribution,
// over `queries` sampled sizes, with profile-mean latencies.
StatusOr<double> OracleBoundForMix(const RunSpec& run, const ProfileSuite& suite,
                                   const InstanceMix& mix, int64_t queries);

}  // namespace sloserve

#include "load_schedule.h"

#include "sloserve/core/rng.h"
#include "sloserve/workload/query_size_sampler.h"

namespace sloserve::cli {

StatusOr<std::vector<Duration>> BuildSchedule(const ArrivalSpec& spec, uint64_t seed) {
  ASSIGN_OR_RETURN(auto process, MakeArrivalProcess(spec, seed));
  std::vector<Duration> schedule;
  while (auto t = process->Next()) schedule.push_back(t->time_since_epoch());
  if (schedule.empty()) return InvalidArgumentError("the arrival process produced no requests");
  return schedule;
}

StatusOr<std::vector<int32_t>> DrawQuerySizes(const std::string& spec,
                                              const std::vector<Duration>& schedule,
                                              uint64_t seed) {
  ASSIGN_OR_RETURN(auto sampler, MakeQuerySizeSampler(spec));
  Rng rng = MakeRng(seed, "workload/sizes");  // the stream sim/simulation.cc draws from
  std::vector<int32_t> sizes(schedule.size());
  for (size_t i = 0; i < sizes.size(); ++i) sizes[i] = sampler->SampleAt(rng, schedule[i]);
  return sizes;
}

double MeanAccuracy(const LoadReport& report, const ProfileSuite& suite) {
  double sum = 0;
  int64_t n = 0;
  for (const auto& [variant, count] : report.variant_counts) {
    auto v = suite.FindVariant(variant);
    if (!v) continue;
    sum += suite.variants()[*v].accuracy * static_cast<double>(count);
    n += count;
  }
  return n > 0 ? sum / static_cast<double>(n) : -1;
}

}  // namespace sloserve::cli

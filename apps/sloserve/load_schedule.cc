#include "load_schedule.h"

namespace sloserve::cli {

StatusOr<std::vector<Duration>> BuildSchedule(const ArrivalSpec& spec, uint64_t seed) {
  ASSIGN_OR_RETURN(auto process, MakeArrivalProcess(spec, seed));
  std::vector<Duration> schedule;
  while (auto t = process->Next()) schedule.push_back(t->time_since_epoch());
  if (schedule.empty()) return InvalidArgumentError("the arrival process produced no requests");
  return schedule;
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

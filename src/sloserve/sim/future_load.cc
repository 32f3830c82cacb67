#include "sloserve/sim/future_load.h"

#include <algorithm>
#include <optional>

namespace sloserve {

void FutureLoad::Count() {
  counted_ = true;
  auto add = [&](size_t model, TimePoint at) {
    const int64_t s = at.time_since_epoch().count() / 1'000'000;
    if (s < 0) return;
    if (per_second_.size() <= model) per_second_.resize(model + 1);
    std::vector<uint32_t>& secs = per_second_[model];
    if (secs.size() <= static_cast<size_t>(s)) secs.resize(static_cast<size_t>(s) + 1, 0);
    ++secs[static_cast<size_t>(s)];
  };
  // Errors here were already reported when the run built the same processes.
  if (models_.empty()) {
    StatusOr<std::unique_ptr<ArrivalProcess>> p = MakeArrivalProcess(*shared_, seed_);
    if (!p.ok()) return;
    while (std::optional<TimePoint> t = (*p)->Next()) add(task_, *t);
    return;
  }
  StatusOr<std::unique_ptr<ModelArrivals>> m = ModelArrivals::Create(*shared_, models_, seed_);
  if (!m.ok()) return;
  while (std::optional<ModelArrivals::Arrival> a = (*m)->Next()) add(a->model, a->at);
}

double FutureLoad::PeakQps(TaskId t, TimePoint from, TimePoint to) {
  if (!counted_) Count();
  if (t >= per_second_.size()) return 0;
  const std::vector<uint32_t>& secs = per_second_[t];
  const int64_t first = std::max<int64_t>(0, from.time_since_epoch().count() / 1'000'000);
  const int64_t end = (to.time_since_epoch().count() + 999'999) / 1'000'000;
  uint32_t peak = 0;
  for (int64_t s = first; s < end && s < static_cast<int64_t>(secs.size()); ++s)
    peak = std::max(peak, secs[static_cast<size_t>(s)]);
  return peak;
}

std::function<double(TaskId, TimePoint, TimePoint)> FuturePeakFunction(
    std::shared_ptr<FutureLoad> load) {
  return [load = std::move(load)](TaskId t, TimePoint from, TimePoint to) {
    return load->PeakQps(t, from, to);
  };
}

}  // namespace sloserve

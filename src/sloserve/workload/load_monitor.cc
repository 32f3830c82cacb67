#include "sloserve/workload/load_monitor.h"

#include <algorithm>
#include <cassert>

namespace sloserve {

LoadMonitor::LoadMonitor(Options options) : options_(options) {
  assert(options_.window > Duration(0));
}

void LoadMonitor::Record(TimePoint arrival) {
  assert(arrivals_.empty() || arrival >= arrivals_.back());
  arrivals_.push_back(arrival);
}

void LoadMonitor::Evict(TimePoint now) {
  const TimePoint cutoff = now - options_.window;
  while (!arrivals_.empty() && arrivals_.front() <= cutoff) arrivals_.pop_front();
}

int64_t LoadMonitor::CountInWindow(TimePoint now) {
  Evict(now);
  return static_cast<int64_t>(arrivals_.size());
}

double LoadMonitor::RateQps(TimePoint now) {
  const int64_t count = CountInWindow(now);
  const Duration span = std::min(options_.window, now - options_.origin);
  if (span <= Duration(0)) return 0.0;
  return static_cast<double>(count) / ToSeconds(span);
}

}  // namespace sloserve

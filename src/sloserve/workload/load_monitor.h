#pragma once
// LoadMonitor: moving-window arrival-rate estimate, as adaptive policies use to pick the
// current load point (RAMSIS switches its policy table by the observed load; Jellyfish+/
// ModelSwitching/InfAdapter re-plan on the measured rate).
//
// RateQps(now) = (arrivals in (now - window, now]) / min(window, now - origin), i.e. over
// the elapsed time while less than one window has passed since `origin`. Record() must be
// called with non-decreasing times; both calls are O(1) amortized. Under virtual time:
// never reads a clock.
#include <cstdint>
#include <deque>

#include "sloserve/core/time.h"

namespace sloserve {

class LoadMonitor {
 public:
  struct Options {
    Duration window = Millis(500);  // > 0
    TimePoint origin = kTimeZero;   // when observation started
  };

  LoadMonitor() : LoadMonitor(Options{}) {}
  explicit LoadMonitor(Options options);

  void Record(TimePoint arrival);
  // Estimated arrival rate in queries per second at `now` (>= the last recorded time).
  double RateQps(TimePoint now);
  // Arrivals currently inside the window ending at `now`.
  int64_t CountInWindow(TimePoint now);
  Duration window() const { return options_.window; }

 private:
  void Evict(TimePoint now);

  Options options_;
  std::deque<TimePoint> arrivals_;
};

}  // namespace sloserve

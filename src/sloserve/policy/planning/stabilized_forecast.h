#pragma once
// The rate a planner provisions for: each interval's forecast scaled by 1 + margin, and
// scale-down delayed by a stabilisation window (the rate is the largest such value
// recorded within the last `window`), as Kubernetes' autoscalers and InfAdapter's
// adapter do. Shared by the infadapter and composed planning policies (one per model).
#include <deque>
#include <utility>

#include "sloserve/core/time.h"

namespace sloserve {

class StabilizedForecast {
 public:
  StabilizedForecast(double margin, Duration window) : margin_(margin), window_(window) {}
  // Records `forecast` at `now` and returns the rate to provision for.
  double Next(TimePoint now, double forecast);

 private:
  double margin_;
  Duration window_;
  std::deque<std::pair<TimePoint, double>> recent_;  // (when, forecast with margin)
};

}  // namespace sloserve

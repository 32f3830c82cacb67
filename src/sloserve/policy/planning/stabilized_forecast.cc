#include "sloserve/policy/planning/stabilized_forecast.h"

#include <algorithm>

namespace sloserve {

double StabilizedForecast::Next(TimePoint now, double forecast) {
  recent_.emplace_back(now, forecast * (1 + margin_));
  while (!recent_.empty() && recent_.front().first < now - window_) recent_.pop_front();
  double rate = 0;
  for (const auto& [at, f] : recent_) rate = std::max(rate, f);
  return rate;
}

}  // namespace sloserve

#pragma once
// Forecasts of the next interval's load from the per-second arrival history, for
// planners that provision ahead of demand (InfAdapter: "the maximum load for the next
// minute"). The paper's LSTM is not built yet (docs/infadapter.md); these are the
// baselines it is compared against:
//   last_value   the last second's rate
//   moving_max   the largest rate of the last `window_s` seconds (default 60)
//   ewma         an exponentially weighted mean with smoothing `ewma_alpha` (default 0.1)
#include <memory>
#include <span>
#include <string>

#include "sloserve/core/status.h"

namespace sloserve {

struct ForecasterOptions {
  std::string kind = "moving_max";
  int window_s = 60;
  double ewma_alpha = 0.1;
};

class LoadForecaster {
 public:
  virtual ~LoadForecaster() = default;
  // `history`: requests/s of each past second, oldest first. 0 when it is empty.
  virtual double Forecast(std::span<const double> history) const = 0;
};

// InvalidArgument naming the option: an unknown kind (with the known ones), window_s < 1,
// ewma_alpha outside (0, 1].
StatusOr<std::unique_ptr<LoadForecaster>> MakeLoadForecaster(const ForecasterOptions& options);

}  // namespace sloserve

#pragma once
// Forecasts of the next interval's load from the per-second arrival history, for
// planners that provision ahead of demand (InfAdapter: "the maximum load for the next
// minute"). Built in:
//   last_value   the last second's rate
//   moving_max   the largest rate of the last `window_s` seconds (default 60)
//   ewma         an exponentially weighted mean with smoothing `ewma_alpha` (default 0.1)
// and registered by the LibTorch library when the build has it (src/sloserve/torch/):
//   lstm         the paper's LSTM (`model_path`, TorchScript; docs/infadapter.md)
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "sloserve/core/status.h"

namespace sloserve {

struct ForecasterOptions {
  std::string kind = "moving_max";
  int window_s = 60;
  double ewma_alpha = 0.1;
  std::string model_path = "models/forecast/twitter_lstm.pt";  // lstm's TorchScript file
};

class LoadForecaster {
 public:
  virtual ~LoadForecaster() = default;
  // `history`: requests/s of each past second, oldest first. 0 when it is empty.
  virtual double Forecast(std::span<const double> history) const = 0;
  // A trained forecaster: the trace seconds [first, second) it was fitted on, which an
  // evaluation must not score it on (forecast_evaluation.h). None for the baselines.
  virtual std::optional<std::pair<int64_t, int64_t>> TrainedOn() const { return std::nullopt; }
};

// InvalidArgument naming the option: an unknown kind (with the known ones), window_s < 1,
// ewma_alpha outside (0, 1], `lstm` in a build without LibTorch, or the factory's error.
StatusOr<std::unique_ptr<LoadForecaster>> MakeLoadForecaster(const ForecasterOptions& options);

// Adds a forecaster kind built outside this library (the LSTM needs LibTorch). Call at
// start-up, before any MakeLoadForecaster (not synchronised).
using LoadForecasterFactory =
    std::function<StatusOr<std::unique_ptr<LoadForecaster>>(const ForecasterOptions&)>;
void RegisterLoadForecaster(const std::string& kind, LoadForecasterFactory factory);

}  // namespace sloserve

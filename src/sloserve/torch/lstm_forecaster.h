#pragma once
// InfAdapter's LSTM load forecaster (paper section 4; docs/infadapter.md): a TorchScript
// model that maps the per-second arrival rates of the past 600 s to the largest
// per-second rate of the next minute, trained by tools/train_load_forecaster.py on the
// Twitter trace's first 14 days (models/forecast/twitter_lstm.pt). Shorter histories
// are padded on the left with their oldest second (an empty one forecasts 0).
#include <memory>
#include <string>

#include "sloserve/core/status.h"
#include "sloserve/policy/planning/load_forecaster.h"

namespace sloserve {

inline constexpr int kLstmHistorySeconds = 600;

// Loads `path` and checks it maps a [1, 600] FP32 tensor to one value and declares the
// trace seconds it was trained on (int attributes train_begin_s, train_end_s:
// TrainedOn()); the error names the file (missing, not TorchScript, wrong signature).
StatusOr<std::unique_ptr<LoadForecaster>> MakeLstmForecaster(const std::string& path);

// Makes `forecaster: lstm` available to MakeLoadForecaster (option model_path).
void RegisterLstmForecaster();

}  // namespace sloserve

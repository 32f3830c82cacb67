#pragma once
// Options shared by the planning policies that forecast the load and rebuild the pool
// every interval (infadapter and its baselines, composed): one declaration each, so the
// same name means the same thing, range and default in both.
#include "sloserve/core/declared_key.h"

namespace sloserve::planning_options {

inline const KeyDecl kIntervalS{.name = "interval_s",
                                .type = KeyType::kNumber,
                                .default_value = "30",
                                .unit = "s",
                                .min = 1,
                                .max = 86400,
                                .help = "time between solves"};
inline const KeyDecl kHeadroom{
    .name = "headroom",
    .type = KeyType::kNumber,
    .default_value = "0.8",
    .min = 0,
    .max = 1,
    .min_exclusive = true,
    .help = "fraction of a worker's measured capacity its quota may use"};
inline const KeyDecl kBeta{
    .name = "beta",
    .type = KeyType::kNumber,
    .default_value = "0.05",
    .min = 0,
    .max = 1,
    .help =
        "Eq. 1 weight of the whole budget's cost (cores, or $/h), as a fraction of accuracy "
        "(0.05 = 5 accuracy points)"};
inline const KeyDecl kGamma{.name = "gamma",
                            .type = KeyType::kNumber,
                            .default_value = "0.001",
                            .min = 0,
                            .max = 1,
                            .help =
                                "Eq. 1 weight of the largest loading time, as a fraction of "
                                "accuracy"};
inline const KeyDecl kMargin{.name = "margin",
                             .type = KeyType::kNumber,
                             .default_value = "0.1",
                             .min = 0,
                             .max = 10,
                             .help = "the forecast is scaled by 1 + margin"};
inline const KeyDecl kForecaster{
    .name = "forecaster",
    .type = KeyType::kString,
    .default_value = "moving_max",
    .help =
        "load forecaster: moving_max, last_value, ewma or lstm (composed "
        "also oracle: the run's own future load, sim only)"};
inline const KeyDecl kForecastWindowS{.name = "forecast_window_s",
                                      .type = KeyType::kInteger,
                                      .default_value = "60",
                                      .unit = "s",
                                      .min = 1,
                                      .max = 86400,
                                      .help = "moving_max's window"};
inline const KeyDecl kEwmaAlpha{.name = "ewma_alpha",
                                .type = KeyType::kNumber,
                                .default_value = "0.1",
                                .min = 0,
                                .max = 1,
                                .min_exclusive = true,
                                .help = "ewma's smoothing"};
inline const KeyDecl kLstmModel{.name = "lstm_model",
                                .type = KeyType::kPath,
                                .default_value = "models/forecast/twitter_lstm.pt",
                                .help = "lstm's TorchScript file"};
inline const KeyDecl kStabilizationS{.name = "stabilization_s",
                                     .type = KeyType::kNumber,
                                     .default_value = "60",
                                     .unit = "s",
                                     .min = 0,
                                     .max = 86400,
                                     .help = "scale-down delay"};
inline const KeyDecl kRolloutTimeoutS{
    .name = "rollout_timeout_s",
    .type = KeyType::kNumber,
    .default_value = "120",
    .unit = "s",
    .min = 1,
    .max = 86400,
    .help = "how long to wait for new workers before switching anyway"};

}  // namespace sloserve::planning_options

#pragma once
// How long a batch takes, drawn from the profile: the latency of (hardware, variant,
// rows), plus the data-loading component when the profile has one (Kairos), plus the
// cold start. Two modes: a fixed quantile of the samples (RAMSIS simulates with p95,
// deterministic) or a random sample per batch. `time_scale` multiplies every duration
// (0 makes an executor that answers at once, for measuring server overhead).
#include <string>
#include <vector>

#include "sloserve/core/rng.h"
#include "sloserve/core/status.h"
#include "sloserve/engine/executor_port.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct ServiceTimeOptions {
  enum class Mode { kQuantile, kSample };
  Mode mode = Mode::kQuantile;
  double quantile = 0.95;
  double time_scale = 1.0;
};

// Parses "p95", "p50", "p99.9", "mean"->no, "sample" into options.
StatusOr<ServiceTimeOptions> ParseServiceTimeMode(const std::string& text);

class ServiceTimeModel {
 public:
  ServiceTimeModel(const ProfileSuite* suite, ServiceTimeOptions options, uint64_t seed);
  // Duration of the batch; rows beyond the largest profiled batch use the largest
  // batch's latency scaled linearly in rows (policies avoid forming such batches).
  Duration BatchDuration(const BatchLaunch& launch);
  const ServiceTimeOptions& options() const { return options_; }

 private:
  Duration Draw(const LatencyDistribution* d);
  const ProfileSuite* suite_;
  ServiceTimeOptions options_;
  Rng rng_;
};

}  // namespace sloserve

#pragma once
// How long a batch takes, drawn from the profile: the latency of (hardware, variant,
// rows), plus the data-loading component when the profile has one (Kairos); and how long
// loading a variant takes (its profiled load time). Two modes: a fixed quantile of the samples
// (RAMSIS simulates with p95, deterministic) or a random sample per batch. `time_scale` multiplies
// every duration (0 makes an executor that answers at once, for measuring server overhead).
//
// Dynamic models (ORLOJ): when the suite has exec_hist records for the batch's variant
// and the launch carries its queries, each query's execution time alone l_r is drawn
// from its app's histogram (app id = index in ExecTimeTable::apps(); an unknown app
// draws from the variant's pooled distribution and is counted in unknown_app_draws()),
// and the batch takes l_B = c0 + c1 * k * max_r l_r (requests padded to the longest),
// with c0, c1 fitted from the profile's latency table (FitBatchTimeModel, reference =
// the pooled mean). This holds in both latency modes; cold start and time_scale apply
// as usual. Each drawn l_r (times time_scale) is appended to `solo` when given,
// so the engine can report it to the batching policy (ORLOJ's online profiler).
#include <map>
#include <string>
#include <vector>

#include "sloserve/core/rng.h"
#include "sloserve/core/status.h"
#include "sloserve/engine/worker_protocol.h"
#include "sloserve/profile/exec_time_model.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct ServiceTimeOptions {
  // kCapacity (suites with capacity records, InfAdapter's): a worker serves a batch of r
  // rows in r / saturation_rps(hardware, variant) seconds, one batch at a time, so it
  // sustains the measured saturation throughput of its core count and its latency
  // includes queueing, rising as the load nears capacity. (The profile's latency is the
  // p99 measured at the capacity rate, queueing included: taken as a service time it
  // would count queueing twice.) Pairs without a capacity record fall back to kQuantile.
  enum class Mode { kQuantile, kSample, kCapacity };
  Mode mode = Mode::kQuantile;
  double quantile = 0.95;
  double time_scale = 1.0;
};

// Parses "p95", "p50", "p99.9", "sample", "capacity" into options.
StatusOr<ServiceTimeOptions> ParseServiceTimeMode(const std::string& text);

class ServiceTimeModel {
 public:
  ServiceTimeModel(const ProfileSuite* suite, ServiceTimeOptions options, uint64_t seed);
  // Duration of the batch; rows beyond the largest profiled batch use the largest
  // batch's latency scaled linearly in rows (policies avoid forming such batches).
  Duration BatchDuration(const RunBatch& batch, std::vector<Duration>* solo = nullptr);
  Duration LoadDuration(const LoadVariant& load) const;
  const ServiceTimeOptions& options() const { return options_; }
  int64_t unknown_app_draws() const { return unknown_app_draws_; }

 private:
  // l_B for a dynamic variant; false when v is static (or unfit).
  bool DynamicCompute(const RunBatch& b, std::vector<Duration>* solo, Duration* compute);
  Duration Scaled(Duration d) const;
  Duration Draw(const LatencyDistribution* d);
  // kCapacity: the largest saturation throughput recorded per [hardware][variant] (0: none).
  std::vector<std::vector<double>> saturation_rps_;
  const ProfileSuite* suite_;
  ServiceTimeOptions options_;
  Rng rng_;
  ExecTimeTable exec_;
  std::map<std::pair<HardwareId, VariantId>, StatusOr<BatchTimeModel>> fits_;
  int64_t unknown_app_draws_ = 0;
};

}  // namespace sloserve

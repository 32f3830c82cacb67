#pragma once
// Latency prediction for heterogeneous query distribution (Kairos, HPDC'23, section 5.1
// "Remarks on assumptions and overhead", and section 8.6 / Fig. 16b for the noise).
//
// Predicts the service time of one query of `rows` rows on a hardware type for a
// variant. Three sources, chosen by the option `predict`:
//   mean (default)  the profile's mean service time (latency + data loading, paired as
//                   ProfileSuite::ServiceLatency does) at the smallest profiled batch
//                   >= rows. Kairos: inference is deterministic, latency variance is low
//                   (< 0.5% of the mean), so the mean is the natural point estimate; the
//                   0.98 QoS safety factor of the dispatcher absorbs the rest.
//   pNN             a quantile of the same distribution (p99, p95, p50, p99.9 ...).
//   online          learned online from observed service times, no profile used:
//                   OnlineLatencyModel below (linear fit first, then a lookup table).
// Beyond the largest profiled batch the profile value is scaled linearly in rows.
//
// Noise (option `prediction_noise`, default 0): each prediction handed out by
// PredictNoisy() gets additive Gaussian noise with standard deviation
// prediction_noise x the prediction (Fig. 16b injects "additive Gaussian white noise with
// 5% variance": we read 5% as a relative standard deviation of 0.05), clamped at >= 0.
// Draws come from MakeRng(seed, "latency-predictor/noise"): deterministic per run.
#include <string>
#include <vector>

#include "sloserve/core/rng.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/policy/params.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

// Per (hardware, variant) latency-vs-rows model learned from observations.
// - 0 observations: predicts 0 (optimistic, so an unexplored instance type gets tried);
// - 1 observation (x, y), or several at a single size: proportional, y * rows / x;
// - >= 2 distinct sizes: least-squares line a + b*rows (clamped at >= 0);
// - a size bucket (rows rounded up to a multiple of `bucket_rows`, like the profiled
//   sizes) with >= `table_min_samples` observations: the mean of that bucket (the
//   lookup table Kairos "quickly transitions into").
class OnlineLatencyModel {
 public:
  OnlineLatencyModel() = default;
  OnlineLatencyModel(int bucket_rows, int table_min_samples)
      : bucket_rows_(bucket_rows), table_min_samples_(table_min_samples) {}
  void Observe(int rows, Duration latency);
  Duration Predict(int rows) const;
  int64_t observations() const { return n_; }
  // Whether Predict(rows) is served from the lookup table.
  bool FromTable(int rows) const;

 private:
  size_t Bucket(int rows) const;
  int bucket_rows_ = 10;
  int table_min_samples_ = 3;
  int64_t n_ = 0;
  double sx_ = 0, sy_ = 0, sxx_ = 0, sxy_ = 0;
  std::vector<int64_t> bucket_count_;
  std::vector<double> bucket_sum_;
};

class LatencyPredictor {
 public:
  struct Options {
    std::string predict = "mean";  // mean | pNN | online
    double quantile = -1;          // pNN as a fraction; < 0 for mean
    bool online = false;
    double noise = 0;  // relative standard deviation of the additive Gaussian noise
    int bucket_rows = 10;
    int table_min_samples = 3;
  };
  // Reads `predict`, `prediction_noise`, `online_bucket_rows`, `online_table_samples`.
  static StatusOr<Options> ParseOptions(const PolicyParams& params);

  LatencyPredictor() = default;
  explicit LatencyPredictor(Options o) : options_(o) {}
  // Precomputes the profile tables for every (hardware, variant) of the suite.
  Status Init(const ProfileSuite& suite, uint64_t seed);
  const Options& options() const { return options_; }

  // Noise-free prediction.
  Duration Predict(HardwareId hw, VariantId v, int rows) const;
  // Prediction with the configured noise (identical to Predict when noise is 0).
  Duration PredictNoisy(HardwareId hw, VariantId v, int rows);
  // A measured service time (used in online mode; ignored otherwise).
  void Observe(HardwareId hw, VariantId v, int rows, Duration latency);
  const OnlineLatencyModel& online_model(HardwareId hw, VariantId v) const {
    return online_[Index(hw, v)];
  }

 private:
  size_t Index(HardwareId hw, VariantId v) const { return hw * num_variants_ + v; }
  struct Table {
    std::vector<int> sizes;           // ascending profiled batch sizes
    std::vector<int64_t> latency_us;  // parallel: the point estimate
  };
  Options options_;
  size_t num_variants_ = 0;
  std::vector<Table> tables_;               // [hw * num_variants + v]
  std::vector<OnlineLatencyModel> online_;  // same indexing
  Rng rng_;
};

// Gaussian N(0, 1) from two Uniform01 draws (Box-Muller): portable across standard
// libraries, unlike std::normal_distribution.
double StandardNormal(Rng& rng);

}  // namespace sloserve

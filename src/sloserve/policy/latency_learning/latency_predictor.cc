#include "sloserve/policy/latency_learning/latency_predictor.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace sloserve {

// ---------------------------------------------------------------- OnlineLatencyModel

size_t OnlineLatencyModel::Bucket(int rows) const {
  const int r = std::max(rows, 1);
  return static_cast<size_t>((r + bucket_rows_ - 1) / bucket_rows_);
}

void OnlineLatencyModel::Observe(int rows, Duration latency) {
  const double x = std::max(rows, 1);
  const double y = static_cast<double>(latency.count());
  ++n_;
  sx_ += x;
  sy_ += y;
  sxx_ += x * x;
  sxy_ += x * y;
  const size_t b = Bucket(rows);
  if (b >= bucket_count_.size()) {
    bucket_count_.resize(b + 1, 0);
    bucket_sum_.resize(b + 1, 0.0);
  }
  ++bucket_count_[b];
  bucket_sum_[b] += y;
}

bool OnlineLatencyModel::FromTable(int rows) const {
  const size_t b = Bucket(rows);
  return b < bucket_count_.size() && bucket_count_[b] >= table_min_samples_;
}

Duration OnlineLatencyModel::Predict(int rows) const {
  if (n_ == 0) return Duration(0);
  const size_t b = Bucket(rows);
  if (FromTable(rows)) {
    return Duration(std::llround(bucket_sum_[b] / static_cast<double>(bucket_count_[b])));
  }
  const double x = std::max(rows, 1);
  const double n = static_cast<double>(n_);
  const double var = sxx_ - sx_ * sx_ / n;  // n * Var(x)
  double y;
  if (n_ >= 2 && var > 1e-9 * sxx_) {
    const double slope = (sxy_ - sx_ * sy_ / n) / var;
    const double intercept = (sy_ - slope * sx_) / n;
    y = intercept + slope * x;
  } else {  // one size seen so far: proportional to rows
    y = (sy_ / n) * x / (sx_ / n);
  }
  return Duration(std::llround(std::max(0.0, y)));
}

// ---------------------------------------------------------------- LatencyPredictor

double StandardNormal(Rng& rng) {
  const double u1 = 1.0 - Uniform01(rng);  // (0, 1]
  const double u2 = Uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

namespace latency_predictor_options {
const KeyDecl kPredict{.name = "predict",
                       .type = KeyType::kString,
                       .default_value = "mean",
                       .help =
                           "latency prediction: mean (profile mean), pNN (that quantile of "
                           "the profile, e.g. p99) or online (learned)"};
const KeyDecl kPredictionNoise{.name = "prediction_noise",
                               .type = KeyType::kNumber,
                               .default_value = "0",
                               .min = 0,
                               .max = 1,
                               .help =
                                   "relative standard deviation of Gaussian noise on each "
                                   "prediction"};
const KeyDecl kOnlineBucketRows{.name = "online_bucket_rows",
                                .type = KeyType::kInteger,
                                .default_value = "10",
                                .unit = "rows",
                                .min = 1,
                                .max = 2'147'483'647,
                                .help = "online prediction: lookup-table bucket width"};
const KeyDecl kOnlineTableSamples{.name = "online_table_samples",
                                  .type = KeyType::kInteger,
                                  .default_value = "3",
                                  .min = 1,
                                  .max = 2'147'483'647,
                                  .help = "online prediction: samples before a bucket is used"};
// The percentage of `predict: pNN`.
const KeyDecl kPredictPercent{
    .name = "predict", .type = KeyType::kNumber, .min = 0, .max = 100, .min_exclusive = true};
}  // namespace latency_predictor_options

StatusOr<LatencyPredictor::Options> LatencyPredictor::ParseOptions(const PolicyParams& p) {
  namespace opt = latency_predictor_options;
  Options o;
  ASSIGN_OR_RETURN(o.predict, p.GetString(opt::kPredict));
  const std::string bad_predict =
      "option 'predict': expected mean, online or pNN (e.g. p99), got '" + o.predict + "'";
  if (o.predict == "mean") {
    o.quantile = -1;
  } else if (o.predict == "online") {
    o.online = true;
  } else if (o.predict.size() > 1 && o.predict[0] == 'p') {
    StatusOr<double> pct = NumberValue(opt::kPredictPercent, std::string_view(o.predict).substr(1));
    if (!pct.ok()) return InvalidArgumentError(bad_predict);
    o.quantile = *pct / 100.0;
  } else {
    return InvalidArgumentError(bad_predict);
  }
  ASSIGN_OR_RETURN(o.noise, p.GetDouble(opt::kPredictionNoise));
  ASSIGN_OR_RETURN(int64_t bucket, p.GetInt(opt::kOnlineBucketRows));
  o.bucket_rows = static_cast<int>(bucket);
  ASSIGN_OR_RETURN(int64_t tmin, p.GetInt(opt::kOnlineTableSamples));
  o.table_min_samples = static_cast<int>(tmin);
  return o;
}

Status LatencyPredictor::Init(const ProfileSuite& suite, uint64_t seed) {
  num_variants_ = suite.variants().size();
  const size_t slots = suite.hardware().size() * num_variants_;
  tables_.assign(slots, Table());
  online_.assign(slots, OnlineLatencyModel(options_.bucket_rows, options_.table_min_samples));
  rng_ = MakeRng(seed, "latency-predictor/noise");
  for (const auto& [hw, v] : suite.ProfiledPairs()) {
    Table& t = tables_[Index(hw, v)];
    for (int b : suite.BatchSizes(hw, v)) {
      const LatencyDistribution* d = suite.ServiceLatency(hw, v, b);
      if (d == nullptr || d->empty()) continue;
      t.sizes.push_back(b);
      t.latency_us.push_back(options_.quantile < 0 ? d->Mean().count()
                                                   : d->Quantile(options_.quantile).count());
    }
  }
  return OkStatus();
}

Duration LatencyPredictor::Predict(HardwareId hw, VariantId v, int rows) const {
  const size_t idx = Index(hw, v);
  if (idx >= tables_.size()) return Duration(0);
  if (options_.online) return online_[idx].Predict(rows);
  const Table& t = tables_[idx];
  if (t.sizes.empty()) return Duration(0);
  auto pos = std::lower_bound(t.sizes.begin(), t.sizes.end(), rows);
  if (pos == t.sizes.end()) {  // beyond the profile: scale the largest linearly
    const double scale = static_cast<double>(rows) / static_cast<double>(t.sizes.back());
    return Duration(std::llround(static_cast<double>(t.latency_us.back()) * scale));
  }
  return Duration(t.latency_us[static_cast<size_t>(pos - t.sizes.begin())]);
}

Duration LatencyPredictor::PredictNoisy(HardwareId hw, VariantId v, int rows) {
  const Duration base = Predict(hw, v, rows);
  if (options_.noise <= 0) return base;
  const double y =
      static_cast<double>(base.count()) * (1.0 + options_.noise * StandardNormal(rng_));
  return Duration(std::llround(std::max(0.0, y)));
}

void LatencyPredictor::Observe(HardwareId hw, VariantId v, int rows, Duration latency) {
  if (!options_.online) return;
  const size_t idx = Index(hw, v);
  if (idx < online_.size()) online_[idx].Observe(rows, latency);
}

}  // namespace sloserve

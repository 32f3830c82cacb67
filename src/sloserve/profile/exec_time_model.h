#pragma once
// Execution-time model of a dynamic DNN (ORLOJ, Yu et al., "Orloj: Predictably Serving
// Unpredictable DNNs", sections 3.2 and 4.2):
//
//   * ExecCdf: the distribution of one request's execution time *alone*, as a
//     piecewise-linear CDF over sorted knots (a histogram with uniform mass within each
//     bin is exactly such a CDF). Built from an `exec_hist` profile record, from raw
//     samples, or as a weighted mixture (the variant's pooled distribution).
//   * MaxOf: the distribution of the maximum of independent requests, possibly of
//     different apps: F_max(x) = prod_i F_i(x)^{k_i} (the CDF of a maximum of independent
//     variables is the product of their CDFs). This is the exact CDF at every knot of
//     the union grid; between knots it is a polynomial, which we sample at `refine`
//     points per cell (so the mean is exact up to that quadrature; the test checks it
//     against a Monte-Carlo estimate). Simpler than Eq. (8) and equal to it.
//   * BatchTimeModel: l_B = c0 + c1 * k * max_r l_r (Eq. 3-4: requests are padded to
//     the longest), with c0, c1 per (hardware, variant) fitted from the profile's batch
//     latency table (FitBatchTimeModel).
//   * ExecTimeTable: every (variant, app) histogram of a suite, with the variant's pooled
//     distribution (equal weight per app) for requests of unknown apps.
//
// Units: microseconds as doubles. All inputs are validated by the builders.
#include <string>
#include <utility>
#include <vector>

#include "sloserve/core/rng.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

class ExecCdf {
 public:
  ExecCdf() = default;
  // Histogram bins [start + i*width, start + (i+1)*width) with weights >= 0 and a positive
  // sum; uniform within a bin. Leading and trailing empty bins are trimmed.
  static StatusOr<ExecCdf> FromHistogram(double start_us, double width_us,
                                         const std::vector<double>& weights);
  static StatusOr<ExecCdf> FromRecord(const ExecHistogram& h);
  // Non-empty samples >= 0, bucketed into `bins` equal-width bins (one point mass if all
  // samples are equal).
  static StatusOr<ExecCdf> FromSamples(const std::vector<double>& samples_us, int bins);
  // A point mass at `value_us` (static models).
  static ExecCdf Constant(double value_us);
  // Mixture sum_i w_i F_i (weights > 0, normalized here).
  static StatusOr<ExecCdf> Mixture(const std::vector<const ExecCdf*>& parts,
                                   const std::vector<double>& weights);
  // Distribution of max over independent draws: `parts[i]` drawn `counts[i]` times.
  static StatusOr<ExecCdf> MaxOf(const std::vector<std::pair<const ExecCdf*, int>>& parts,
                                 int refine = 8);
  // c0 + scale * X.
  ExecCdf Affine(double c0_us, double scale) const;

  bool empty() const { return x_.empty(); }
  double Cdf(double us) const;
  double Quantile(double q) const;  // q clamped to [0, 1]
  double Mean() const;              // exact for the piecewise-linear CDF
  double Min() const { return x_.front(); }
  double Max() const { return x_.back(); }
  double Sample(Rng& rng) const { return Quantile(Uniform01(rng)); }
  const std::vector<double>& knots() const { return x_; }
  const std::vector<double>& cdf_at_knots() const { return f_; }

 private:
  ExecCdf(std::vector<double> x, std::vector<double> f) : x_(std::move(x)), f_(std::move(f)) {}
  std::vector<double> x_;  // ascending knots (a point mass is two equal knots)
  std::vector<double> f_;  // F at each knot, non-decreasing, f_.front()=0, f_.back()=1
};

struct BatchTimeModel {
  double c0_us = 0;
  double c1 = 1;
  double BatchUs(int k, double max_exec_us) const {
    return c0_us + c1 * static_cast<double>(k) * max_exec_us;
  }
};

// Least-squares fit of the profile's median batch latency lat(k) = A + B k over the
// profiled batch sizes of (hw, v); c0 = max(A, 0), c1 = B / ref_us, so that a batch of
// k requests of the reference length `ref_us` (the pooled mean) takes lat(k). With one
// profiled batch size: c0 = 0, c1 = lat / ref_us. Errors when (hw, v) has no profile or
// ref_us <= 0.
StatusOr<BatchTimeModel> FitBatchTimeModel(const ProfileSuite& suite, HardwareId hw, VariantId v,
                                           double ref_us);

class ExecTimeTable {
 public:
  // Reads every exec_hist record. App ids are the distinct app names in record order
  // (app id i = apps()[i]); the simulator and the server number apps the same way.
  // Histograms whose weights are all zero are skipped and listed in warnings().
  static ExecTimeTable Build(const ProfileSuite& suite);

  const std::vector<std::string>& apps() const { return apps_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  size_t num_variants() const { return pooled_.size(); }
  // True when variant v has at least one usable histogram (a dynamic model).
  bool IsDynamic(VariantId v) const { return v < pooled_.size() && !pooled_[v].empty(); }
  // The distribution of `app` on v, or nullptr (unknown app or no histogram).
  const ExecCdf* ForApp(VariantId v, AppId app) const;
  // The variant's pooled distribution (equal weight per app); empty if not dynamic.
  const ExecCdf& Pooled(VariantId v) const;
  // ForApp, falling back to Pooled; `*unknown` is set when the fallback was used.
  const ExecCdf& ForAppOrPooled(VariantId v, AppId app, bool* unknown) const;
  // Replaces the histogram of a profiled (v, app) pair — with an online profiler's, or a
  // deliberately distorted one — and recomputes v's pooled distribution. Errors when the
  // pair has no histogram or `c` is empty.
  Status Replace(VariantId v, AppId app, ExecCdf c);

 private:
  void RebuildPooled(VariantId v);
  std::vector<std::string> apps_;
  std::vector<std::string> warnings_;
  std::vector<std::vector<ExecCdf>> per_app_;  // [variant][app], empty = none
  std::vector<ExecCdf> pooled_;                // [variant]
};

// The online profiler of section 3.2: finished requests are sampled (1 in
// `sample_every`) and their execution times alone buffered by Record (cheap, on the hot
// path); Refresh (off the hot path, e.g. periodically) folds the buffer into the current
// window's per-app samples and, when `window` has elapsed, turns every app with at least
// `min_samples` samples into a new histogram snapshot and starts a fresh window (the
// "profiling memory" reset that tracks drift). Before the first reset, an app's snapshot
// is built as soon as it has `min_samples`. One profiler covers one variant; ORLOJ feeds
// one per variant from BatchingPolicy::OnBatchComplete (profile/online_exec_table.h).
struct OnlineProfilerOptions {
  int sample_every = 1;
  Duration window = Seconds(600);
  int bins = 64;
  int min_samples = 30;
};

class OnlineExecProfiler {
 public:
  static StatusOr<OnlineExecProfiler> Create(OnlineProfilerOptions options);
  void Record(AppId app, Duration alone, TimePoint now);
  // Returns how many apps got a new snapshot.
  int Refresh(TimePoint now);
  // The app's latest histogram, or nullptr if it has none yet.
  const ExecCdf* Snapshot(AppId app) const;
  size_t buffered() const { return buffer_.size(); }

 private:
  explicit OnlineExecProfiler(OnlineProfilerOptions o) : options_(o) {}
  bool Publish(size_t app);
  OnlineProfilerOptions options_;
  uint64_t seen_ = 0;
  TimePoint window_start_{};
  bool started_ = false;
  std::vector<std::pair<AppId, double>> buffer_;
  std::vector<std::vector<double>> current_;  // [app] samples of this window
  std::vector<ExecCdf> snapshot_;             // [app]
};

}  // namespace sloserve

#pragma once
// Per-app execution-time samplers, for dynamic models whose execution time depends on
// the input (Orloj, OSDI'22 / "Orloj: predictably serving unpredictable DNNs": each app
// has its own execution-time distribution). Times are in microseconds.
//
//   ConstantExecTime      one value
//   NormalMixtureExecTime sum_i w_i N(mean_i, std_i), clamped below at `min` (> 0): a draw
//                         below `min` is reported as `min`; Mean/Quantile account for it.
//   EmpiricalExecTime     uniform over measured samples; quantiles by linear interpolation
//                         between order statistics (numpy default)
//   HistogramExecTime     bins [start + i*width, start + (i+1)*width) with weights; uniform
//                         within a bin; quantiles by inverting the piecewise-linear CDF
//
// Each is built by a static Create that validates and returns StatusOr.
#include <memory>
#include <vector>

#include "sloserve/core/rng.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"

namespace sloserve {

class ExecTimeSampler {
 public:
  virtual ~ExecTimeSampler();
  virtual Duration Sample(Rng& rng) = 0;
  // q in [0, 1] (clamped).
  virtual Duration Quantile(double q) const = 0;
  virtual Duration Mean() const = 0;
};

class ConstantExecTime final : public ExecTimeSampler {
 public:
  static StatusOr<std::unique_ptr<ExecTimeSampler>> Create(Duration value);
  Duration Sample(Rng&) override { return value_; }
  Duration Quantile(double) const override { return value_; }
  Duration Mean() const override { return value_; }

 private:
  explicit ConstantExecTime(Duration value) : value_(value) {}
  Duration value_;
};

class NormalMixtureExecTime final : public ExecTimeSampler {
 public:
  struct Component {
    double weight;   // > 0 (need not sum to 1; normalized)
    double mean_us;  // > 0
    double std_us;   // >= 0
  };
  static StatusOr<std::unique_ptr<ExecTimeSampler>> Create(std::vector<Component> components,
                                                           Duration min = Micros(1));
  Duration Sample(Rng& rng) override;
  Duration Quantile(double q) const override;
  Duration Mean() const override;
  // P(X <= t_us) for the clamped mixture.
  double Cdf(double t_us) const;

 private:
  NormalMixtureExecTime(std::vector<Component> components, std::vector<double> cum_weights,
                        double min_us)
      : components_(std::move(components)), cum_weights_(std::move(cum_weights)), min_us_(min_us) {}
  std::vector<Component> components_;  // weights normalized
  std::vector<double> cum_weights_;
  double min_us_;
};

class EmpiricalExecTime final : public ExecTimeSampler {
 public:
  // Samples must be non-empty and >= 0.
  static StatusOr<std::unique_ptr<ExecTimeSampler>> Create(std::vector<Duration> samples);
  Duration Sample(Rng& rng) override;
  Duration Quantile(double q) const override;
  Duration Mean() const override { return mean_; }

 private:
  EmpiricalExecTime(std::vector<Duration> sorted, Duration mean)
      : sorted_(std::move(sorted)), mean_(mean) {}
  std::vector<Duration> sorted_;
  Duration mean_;
};

class HistogramExecTime final : public ExecTimeSampler {
 public:
  // start >= 0, width > 0, weights non-empty, >= 0, with a positive sum.
  static StatusOr<std::unique_ptr<ExecTimeSampler>> Create(Duration start, Duration width,
                                                           std::vector<double> weights);
  Duration Sample(Rng& rng) override;
  Duration Quantile(double q) const override;
  Duration Mean() const override;

 private:
  HistogramExecTime(double start_us, double width_us, std::vector<double> cum)
      : start_us_(start_us), width_us_(width_us), cum_(std::move(cum)) {}
  double start_us_;
  double width_us_;
  std::vector<double> cum_;  // cumulative normalized weights, cum_.back() == 1
};

}  // namespace sloserve

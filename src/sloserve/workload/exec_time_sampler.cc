#include "sloserve/workload/exec_time_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "sloserve/workload/random_variates.h"

namespace sloserve {
namespace {

Duration RoundUs(double us) {
  return Duration(static_cast<int64_t>(std::llround(us)));
}

double ClampQ(double q) {
  return std::clamp(std::isnan(q) ? 0.0 : q, 0.0, 1.0);
}

}  // namespace

ExecTimeSampler::~ExecTimeSampler() = default;

StatusOr<std::unique_ptr<ExecTimeSampler>> ConstantExecTime::Create(Duration value) {
  if (value < Duration(0)) {
    return InvalidArgumentError("constant exec time: value must be >= 0 (got " +
                                std::to_string(value.count()) + " us)");
  }
  return std::unique_ptr<ExecTimeSampler>(new ConstantExecTime(value));
}

// ---------------------------------------------------------------------------------------
// Normal mixture

StatusOr<std::unique_ptr<ExecTimeSampler>> NormalMixtureExecTime::Create(
    std::vector<Component> components, Duration min) {
  if (components.empty()) {
    return InvalidArgumentError("normal mixture exec time: components must be non-empty");
  }
  if (min <= Duration(0)) {
    return InvalidArgumentError("normal mixture exec time: min must be > 0 (got " +
                                std::to_string(min.count()) + " us)");
  }
  double total = 0.0;
  for (size_t i = 0; i < components.size(); ++i) {
    const Component& c = components[i];
    const std::string where = "normal mixture exec time: component " + std::to_string(i) + ": ";
    if (!(c.weight > 0) || !std::isfinite(c.weight)) {
      return InvalidArgumentError(where + "weight must be a finite number > 0");
    }
    if (!(c.mean_us > 0) || !std::isfinite(c.mean_us)) {
      return InvalidArgumentError(where + "mean_us must be a finite number > 0");
    }
    if (!(c.std_us >= 0) || !std::isfinite(c.std_us)) {
      return InvalidArgumentError(where + "std_us must be a finite number >= 0");
    }
    total += c.weight;
  }
  std::vector<double> cum;
  cum.reserve(components.size());
  double acc = 0.0;
  for (Component& c : components) {
    c.weight /= total;
    acc += c.weight;
    cum.push_back(acc);
  }
  cum.back() = 1.0;
  return std::unique_ptr<ExecTimeSampler>(new NormalMixtureExecTime(
      std::move(components), std::move(cum), static_cast<double>(min.count())));
}

Duration NormalMixtureExecTime::Sample(Rng& rng) {
  const double u = Uniform01(rng);
  size_t i = 0;
  while (i + 1 < cum_weights_.size() && cum_weights_[i] <= u) ++i;
  const Component& c = components_[i];
  const double x = Normal(rng, c.mean_us, c.std_us);
  return RoundUs(std::max(min_us_, x));
}

double NormalMixtureExecTime::Cdf(double t_us) const {
  if (t_us < min_us_) return 0.0;
  double p = 0.0;
  for (const Component& c : components_) {
    if (c.std_us == 0.0) {
      p += t_us >= c.mean_us ? c.weight : 0.0;
    } else {
      p += c.weight * NormalCdf((t_us - c.mean_us) / c.std_us);
    }
  }
  return std::min(p, 1.0);
}

Duration NormalMixtureExecTime::Quantile(double q) const {
  q = ClampQ(q);
  double lo = min_us_;
  if (q <= Cdf(lo)) return RoundUs(lo);
  double hi = lo;
  for (const Component& c : components_) hi = std::max(hi, c.mean_us + 40.0 * c.std_us + 1.0);
  // Bisection on the (monotone) CDF to well below a microsecond.
  for (int iter = 0; iter < 200 && hi - lo > 1e-3; ++iter) {
    const double mid = 0.5 * (lo + hi);
    if (Cdf(mid) < q) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return RoundUs(hi);
}

Duration NormalMixtureExecTime::Mean() const {
  // E[max(m, X)] = m Phi(a) + mu (1 - Phi(a)) + sigma phi(a), a = (m - mu) / sigma.
  double mean = 0.0;
  for (const Component& c : components_) {
    if (c.std_us == 0.0) {
      mean += c.weight * std::max(min_us_, c.mean_us);
      continue;
    }
    const double a = (min_us_ - c.mean_us) / c.std_us;
    mean += c.weight *
            (min_us_ * NormalCdf(a) + c.mean_us * (1.0 - NormalCdf(a)) + c.std_us * NormalPdf(a));
  }
  return RoundUs(mean);
}

// ---------------------------------------------------------------------------------------
// Empirical samples

StatusOr<std::unique_ptr<ExecTimeSampler>> EmpiricalExecTime::Create(
    std::vector<Duration> samples) {
  if (samples.empty()) {
    return InvalidArgumentError("empirical exec time: samples must be non-empty");
  }
  double sum = 0.0;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i] < Duration(0)) {
      return InvalidArgumentError("empirical exec time: sample " + std::to_string(i) +
                                  " is negative (" + std::to_string(samples[i].count()) + " us)");
    }
    sum += static_cast<double>(samples[i].count());
  }
  std::sort(samples.begin(), samples.end());
  const Duration mean = RoundUs(sum / static_cast<double>(samples.size()));
  return std::unique_ptr<ExecTimeSampler>(new EmpiricalExecTime(std::move(samples), mean));
}

Duration EmpiricalExecTime::Sample(Rng& rng) {
  return sorted_[static_cast<size_t>(UniformInt(rng, 0, static_cast<int64_t>(sorted_.size()) - 1))];
}

Duration EmpiricalExecTime::Quantile(double q) const {
  const double pos = ClampQ(q) * static_cast<double>(sorted_.size() - 1);
  const auto i = static_cast<size_t>(pos);
  if (i + 1 >= sorted_.size()) return sorted_.back();
  const double frac = pos - static_cast<double>(i);
  const auto a = static_cast<double>(sorted_[i].count());
  const auto b = static_cast<double>(sorted_[i + 1].count());
  return RoundUs(a + frac * (b - a));
}

// ---------------------------------------------------------------------------------------
// Histogram

StatusOr<std::unique_ptr<ExecTimeSampler>> HistogramExecTime::Create(Duration start, Duration width,
                                                                     std::vector<double> weights) {
  if (start < Duration(0)) {
    return InvalidArgumentError("histogram exec time: start must be >= 0");
  }
  if (width <= Duration(0)) {
    return InvalidArgumentError("histogram exec time: width must be > 0");
  }
  if (weights.empty()) {
    return InvalidArgumentError("histogram exec time: weights must be non-empty");
  }
  double total = 0.0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] >= 0) || !std::isfinite(weights[i])) {
      return InvalidArgumentError("histogram exec time: weight " + std::to_string(i) +
                                  " must be a finite number >= 0");
    }
    total += weights[i];
  }
  if (!(total > 0)) {
    return InvalidArgumentError("histogram exec time: weights must have a positive sum");
  }
  std::vector<double> cum(weights.size());
  double acc = 0.0;
  for (size_t i = 0; i < weights.size(); ++i) {
    acc += weights[i] / total;
    cum[i] = acc;
  }
  // Make the last positive bin end exactly at 1 (and any trailing empty bins too).
  for (size_t i = weights.size(); i-- > 0 && cum[i] >= 1.0 - 1e-12;) cum[i] = 1.0;
  cum.back() = 1.0;
  return std::unique_ptr<ExecTimeSampler>(new HistogramExecTime(
      static_cast<double>(start.count()), static_cast<double>(width.count()), std::move(cum)));
}

Duration HistogramExecTime::Sample(Rng& rng) {
  const double u = Uniform01(rng);
  auto it = std::upper_bound(cum_.begin(), cum_.end(), u);
  if (it == cum_.end()) --it;
  const auto i = static_cast<double>(it - cum_.begin());
  return RoundUs(start_us_ + (i + Uniform01(rng)) * width_us_);
}

Duration HistogramExecTime::Quantile(double q) const {
  q = ClampQ(q);
  if (q <= 0.0) {
    // Start of the first non-empty bin.
    const auto it = std::upper_bound(cum_.begin(), cum_.end(), 0.0);
    return RoundUs(start_us_ + static_cast<double>(it - cum_.begin()) * width_us_);
  }
  auto it = std::lower_bound(cum_.begin(), cum_.end(), q);
  if (it == cum_.end()) --it;
  const size_t i = static_cast<size_t>(it - cum_.begin());
  const double prev = i == 0 ? 0.0 : cum_[i - 1];
  const double frac = cum_[i] > prev ? (q - prev) / (cum_[i] - prev) : 1.0;
  return RoundUs(start_us_ + (static_cast<double>(i) + frac) * width_us_);
}

Duration HistogramExecTime::Mean() const {
  double mean = 0.0;
  double prev = 0.0;
  for (size_t i = 0; i < cum_.size(); ++i) {
    mean += (cum_[i] - prev) * (start_us_ + (static_cast<double>(i) + 0.5) * width_us_);
    prev = cum_[i];
  }
  return RoundUs(mean);
}

}  // namespace sloserve

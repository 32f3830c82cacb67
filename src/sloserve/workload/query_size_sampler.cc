#include "sloserve/workload/query_size_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "sloserve/core/declared_key.h"
#include "sloserve/workload/random_variates.h"

namespace sloserve {

QuerySizeSampler::~QuerySizeSampler() = default;

int32_t DeepRecSysSizeSampler::Sample(Rng& rng) {
  const double p = Uniform01(rng);
  if (p < 0.08) return static_cast<int32_t>(UniformInt(rng, 1, 99));
  if (p < 0.30) return static_cast<int32_t>(UniformInt(rng, 200, 599));
  if (p < 0.35) return static_cast<int32_t>(UniformInt(rng, 600, 999));
  const double v = std::round(LogNormal(rng, 5.1, 0.2));
  if (v < 100.0 || v > 200.0) return static_cast<int32_t>(UniformInt(rng, 190, 200));
  return static_cast<int32_t>(v);
}

double DeepRecSysSizeSampler::Mean() const {
  // Log-normal part: E[X; 100 <= X <= 200] + P(outside) * 195, with X ~ LN(5.1, 0.2)
  // (rounding ignored).
  const double mu = 5.1;
  const double sigma = 0.2;
  const double a = (std::log(100.0) - mu) / sigma;
  const double b = (std::log(200.0) - mu) / sigma;
  const double inside = NormalCdf(b) - NormalCdf(a);
  const double partial_mean =
      std::exp(mu + 0.5 * sigma * sigma) * (NormalCdf(b - sigma) - NormalCdf(a - sigma));
  const double lognormal_part = partial_mean + (1.0 - inside) * 195.0;
  return 0.08 * 50.0 + 0.22 * 399.5 + 0.05 * 799.5 + 0.65 * lognormal_part;
}

GaussianSizeSampler::GaussianSizeSampler(double mean, double stddev, int32_t lo, int32_t hi)
    : mean_(mean), stddev_(stddev), lo_(lo), hi_(hi) {}

int32_t GaussianSizeSampler::Sample(Rng& rng) {
  // The constructor's arguments keep [lo, hi] within a few deviations of the mean, so
  // rejection ends quickly; the cap only guards against a pathological stream.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const double v = std::round(Normal(rng, mean_, stddev_));
    if (v >= lo_ && v <= hi_) return static_cast<int32_t>(v);
  }
  return static_cast<int32_t>(
      std::clamp(std::round(mean_), static_cast<double>(lo_), static_cast<double>(hi_)));
}

double GaussianSizeSampler::Mean() const {
  // Mean of the normal truncated to [lo - 0.5, hi + 0.5] (rounding ignored).
  const double a = (lo_ - 0.5 - mean_) / stddev_;
  const double b = (hi_ + 0.5 - mean_) / stddev_;
  const double pdf_a = std::exp(-0.5 * a * a), pdf_b = std::exp(-0.5 * b * b);
  const double mass = NormalCdf(b) - NormalCdf(a);
  return mean_ + stddev_ * (pdf_a - pdf_b) / (std::sqrt(2 * M_PI) * mass);
}

namespace {

StatusOr<std::unique_ptr<QuerySizeSampler>> ParseGaussian(std::string_view name) {
  constexpr int32_t kLo = 1, kHi = 1000;
  const std::string_view text = name.substr(std::string_view("gaussian:").size());
  const size_t colon = text.find(':');
  const std::string error = "query size sampler '" + std::string(name) +
                            "': expected gaussian:<mean>:<stddev> with mean in [1, 1000] "
                            "and stddev > 0";
  if (colon == std::string_view::npos) return InvalidArgumentError(error);
  const std::optional<double> mean = ParseNumber(text.substr(0, colon));
  const std::optional<double> sd = ParseNumber(text.substr(colon + 1));
  if (!mean || !sd || !(*mean >= kLo && *mean <= kHi) || !(*sd > 0 && *sd <= 10 * kHi)) {
    return InvalidArgumentError(error);
  }
  return std::unique_ptr<QuerySizeSampler>(
      std::make_unique<GaussianSizeSampler>(*mean, *sd, kLo, kHi));
}

StatusOr<std::unique_ptr<QuerySizeSampler>> ParseSwitch(std::string_view name) {
  const std::string error = "query size sampler '" + std::string(name) +
                            "': expected switch:<seconds>:<spec>/<spec> with seconds > 0 "
                            "and two specs that are not switches";
  const std::string_view text = name.substr(std::string_view("switch:").size());
  const size_t colon = text.find(':');
  const size_t slash = text.find('/');
  if (colon == std::string_view::npos || slash == std::string_view::npos || slash < colon)
    return InvalidArgumentError(error);
  const std::optional<double> seconds = ParseNumber(text.substr(0, colon));
  if (!seconds || !(*seconds > 0 && *seconds <= 1e9)) return InvalidArgumentError(error);
  const std::string_view first = text.substr(colon + 1, slash - colon - 1);
  const std::string_view second = text.substr(slash + 1);
  if (first.starts_with("switch:") || second.starts_with("switch:"))
    return InvalidArgumentError(error);
  StatusOr<std::unique_ptr<QuerySizeSampler>> before = MakeQuerySizeSampler(first);
  const std::string owner = "query size sampler '" + std::string(name) + "'";
  if (!before.ok()) return before.status().WithPrefix(owner);
  StatusOr<std::unique_ptr<QuerySizeSampler>> after = MakeQuerySizeSampler(second);
  if (!after.ok()) return after.status().WithPrefix(owner);
  return std::unique_ptr<QuerySizeSampler>(std::make_unique<SwitchSizeSampler>(
      SecondsF(*seconds), std::move(*before), std::move(*after)));
}

}  // namespace

StatusOr<std::unique_ptr<QuerySizeSampler>> MakeQuerySizeSampler(std::string_view name) {
  if (name.substr(0, 9) == "gaussian:") return ParseGaussian(name);
  if (name.starts_with("switch:")) return ParseSwitch(name);
  if (name == "deeprecsys") {
    return std::unique_ptr<QuerySizeSampler>(std::make_unique<DeepRecSysSizeSampler>());
  }
  constexpr std::string_view kConstant = "constant:";
  if (name.substr(0, kConstant.size()) == kConstant) {
    std::string_view num = name.substr(kConstant.size());
    int64_t n = 0;
    if (!ParseIntegerToken(num, n) || n < 1 || n > std::numeric_limits<int32_t>::max()) {
      return InvalidArgumentError("query size sampler '" + std::string(name) +
                                  "': size after 'constant:' must be an integer >= 1");
    }
    return std::unique_ptr<QuerySizeSampler>(
        std::make_unique<ConstantSizeSampler>(static_cast<int32_t>(n)));
  }
  return InvalidArgumentError("unknown query size sampler '" + std::string(name) +
                              "' (expected 'constant:<n>', 'deeprecsys', "
                              "'gaussian:<mean>:<stddev>' or 'switch:<seconds>:<spec>/<spec>')");
}

}  // namespace sloserve

#include "sloserve/workload/query_size_sampler.h"

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

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

StatusOr<std::unique_ptr<QuerySizeSampler>> MakeQuerySizeSampler(std::string_view name) {
  if (name == "deeprecsys") {
    return std::unique_ptr<QuerySizeSampler>(std::make_unique<DeepRecSysSizeSampler>());
  }
  constexpr std::string_view kConstant = "constant:";
  if (name.substr(0, kConstant.size()) == kConstant) {
    std::string_view num = name.substr(kConstant.size());
    int32_t n = 0;
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
    if (ec != std::errc() || p != num.data() + num.size() || n < 1) {
      return InvalidArgumentError("query size sampler '" + std::string(name) +
                                  "': size after 'constant:' must be an integer >= 1");
    }
    return std::unique_ptr<QuerySizeSampler>(std::make_unique<ConstantSizeSampler>(n));
  }
  return InvalidArgumentError("unknown query size sampler '" + std::string(name) +
                              "' (expected 'constant:<n>' or 'deeprecsys')");
}

}  // namespace sloserve

#pragma once
// Query-size samplers: the number of rows ("query batch size" in Kairos) of each query.
//
// DeepRecSys production mix, as the Kairos artifact generates it (Kairos, HPDC'23, and
// DeepRecSys, ISCA'20; see datasets/README.md): with probability
//   0.08  uniform integer in [1, 100)
//   0.22  uniform integer in [200, 600)
//   0.05  uniform integer in [600, 1000)
//   0.65  round(log-normal(mu 5.1, sigma 0.2)); a value outside [100, 200] is redrawn as a
//         uniform integer in [190, 200]
// Shares by bin [1,100) / [100,200] / (200,600) / [600,1000]: about 8 / 65 / 22 / 5 %, mean
// about 240.
#include <cstdint>
#include <memory>
#include <string_view>

#include "sloserve/core/rng.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"

namespace sloserve {

class QuerySizeSampler {
 public:
  virtual ~QuerySizeSampler();
  virtual int32_t Sample(Rng& rng) = 0;
  // The size of a query arriving `since_start` into the run: the same as Sample but for
  // samplers whose distribution changes over time (SwitchSizeSampler).
  virtual int32_t SampleAt(Rng& rng, Duration since_start) {
    (void)since_start;
    return Sample(rng);
  }
  // Expected size (exact for constant, analytic approximation for mixes).
  virtual double Mean() const = 0;
};

class ConstantSizeSampler final : public QuerySizeSampler {
 public:
  explicit ConstantSizeSampler(int32_t size) : size_(size) {}
  int32_t Sample(Rng&) override { return size_; }
  double Mean() const override { return size_; }

 private:
  int32_t size_;
};

class DeepRecSysSizeSampler final : public QuerySizeSampler {
 public:
  int32_t Sample(Rng& rng) override;
  double Mean() const override;
};

// Gaussian sizes (Kairos Fig. 16a: "batch size follows Gaussian distribution"): a
// normal draw rounded to an integer, redrawn until it falls in [lo, hi] (a truncated
// normal; the mean is that of the truncated distribution).
class GaussianSizeSampler final : public QuerySizeSampler {
 public:
  GaussianSizeSampler(double mean, double stddev, int32_t lo, int32_t hi);
  int32_t Sample(Rng& rng) override;
  double Mean() const override;

 private:
  double mean_, stddev_;
  int32_t lo_, hi_;
};

// A size distribution that changes once (Kairos Fig. 12: from one distribution to another
// while serving): `before`'s sizes until `at` into the run, `after`'s from then on. Sample
// (no time) and Mean are `before`'s.
class SwitchSizeSampler final : public QuerySizeSampler {
 public:
  SwitchSizeSampler(Duration at, std::unique_ptr<QuerySizeSampler> before,
                    std::unique_ptr<QuerySizeSampler> after)
      : at_(at), before_(std::move(before)), after_(std::move(after)) {}
  int32_t Sample(Rng& rng) override { return before_->Sample(rng); }
  int32_t SampleAt(Rng& rng, Duration since_start) override {
    return since_start < at_ ? before_->Sample(rng) : after_->Sample(rng);
  }
  double Mean() const override { return before_->Mean(); }

 private:
  Duration at_;
  std::unique_ptr<QuerySizeSampler> before_, after_;
};

// "constant:<n>" (n >= 1), "deeprecsys", "gaussian:<mean>:<stddev>" (sizes in [1, 1000],
// the profiled range of kairos-recsys; mean in [1, 1000], stddev > 0), or
// "switch:<seconds>:<spec>/<spec>" (the first spec's sizes until that many seconds into
// the run, the second's after; neither a switch itself).
StatusOr<std::unique_ptr<QuerySizeSampler>> MakeQuerySizeSampler(std::string_view name);

}  // namespace sloserve

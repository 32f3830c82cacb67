#pragma once
// The arrivals of a multi-model deployment (docs/multi-model.md): the shared workload,
// each of its arrivals given to one of the models that take a share of it (drawn by
// share from its own seeded stream), and the arrival processes of the models that have
// their own, merged in time order. Deterministic for a seed: equal times come out in
// stream order (the shared workload first, then the models in their order).
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "sloserve/core/rng.h"
#include "sloserve/core/status.h"
#include "sloserve/workload/arrival_spec.h"

namespace sloserve {

struct ModelStream {
  std::string name;                  // seeds its own process ("model/NAME")
  double share = 0;                  // of the shared workload (0 = none)
  const ArrivalSpec* own = nullptr;  // its own process, or null
};

class ModelArrivals {
 public:
  struct Arrival {
    TimePoint at{};
    size_t model = 0;  // index into the models given
  };

  // `shared` is read only when a model takes a share of it; it is seeded with `seed` as
  // a single-model run's workload is, so a one-model deployment sees the same arrivals.
  static StatusOr<std::unique_ptr<ModelArrivals>> Create(const ArrivalSpec& shared,
                                                         const std::vector<ModelStream>& models,
                                                         uint64_t seed);
  std::optional<Arrival> Next();

 private:
  struct Head {
    TimePoint at;
    size_t stream;  // 0 = shared, 1 + i = model i's own
    bool operator>(const Head& o) const { return at != o.at ? at > o.at : stream > o.stream; }
  };
  ModelArrivals() = default;
  void Advance(size_t stream);

  std::vector<std::unique_ptr<ArrivalProcess>> streams_;  // [0] = shared (may be null)
  std::vector<double> cumulative_;                        // shares, summed over models
  Rng pick_;
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads_;
};

}  // namespace sloserve

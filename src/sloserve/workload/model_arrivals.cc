#include "sloserve/workload/model_arrivals.h"

#include <algorithm>

namespace sloserve {

StatusOr<std::unique_ptr<ModelArrivals>> ModelArrivals::Create(
    const ArrivalSpec& shared, const std::vector<ModelStream>& models, uint64_t seed) {
  std::unique_ptr<ModelArrivals> a(new ModelArrivals());
  a->pick_ = MakeRng(seed, "workload/models");
  double total = 0;
  for (const ModelStream& m : models) {
    total += m.own ? 0.0 : m.share;
    a->cumulative_.push_back(total);
  }
  a->streams_.resize(1 + models.size());
  if (total > 0) {
    ASSIGN_OR_RETURN(a->streams_[0], MakeArrivalProcess(shared, seed));
  }
  for (size_t i = 0; i < models.size(); ++i) {
    if (!models[i].own) continue;
    const uint64_t own_seed = MixSeed(seed ^ HashName("model/" + models[i].name));
    ASSIGN_OR_RETURN(a->streams_[1 + i], MakeArrivalProcess(*models[i].own, own_seed));
  }
  for (size_t s = 0; s < a->streams_.size(); ++s) {
    if (a->streams_[s]) a->Advance(s);
  }
  return a;
}

void ModelArrivals::Advance(size_t stream) {
  if (std::optional<TimePoint> t = streams_[stream]->Next()) heads_.push({*t, stream});
}

std::optional<ModelArrivals::Arrival> ModelArrivals::Next() {
  if (heads_.empty()) return std::nullopt;
  const Head h = heads_.top();
  heads_.pop();
  Advance(h.stream);
  if (h.stream > 0) return Arrival{h.at, h.stream - 1};
  const double u = Uniform01(pick_) * cumulative_.back();
  size_t m = static_cast<size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) -
                                 cumulative_.begin());
  m = std::min(m, cumulative_.size() - 1);
  // A model with no share has the same cumulative value as the one before it, so
  // upper_bound never lands on it (unless u is exactly a boundary: step to the owner).
  while (m > 0 && cumulative_[m] == cumulative_[m - 1]) --m;
  return Arrival{h.at, m};
}

}  // namespace sloserve

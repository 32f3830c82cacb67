#pragma once
// A proxy's model cache (docs/model-aware.md): models resident in a bounded amount of
// memory, evicted least-recently-used first when a new model needs the room. A model in
// use (loading, or a request running on it) is pinned and never evicted.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sloserve {

class ModelCache {
 public:
  explicit ModelCache(double capacity_mb) : capacity_mb_(capacity_mb) {}

  double capacity_mb() const { return capacity_mb_; }
  double used_mb() const { return used_mb_; }
  bool Contains(int model) const { return Find(model) != nullptr; }
  // Whether a model of `size_mb` could ever be held (an empty cache has the room).
  bool CanHold(double size_mb) const { return size_mb <= capacity_mb_; }
  // Marks a use: the model becomes the most recently used.
  void Touch(int model);
  // Makes room for `model` (evicting unpinned models, least recently used first) and
  // inserts it. Returns false, changing nothing, when pinned models leave too little room
  // or the model is larger than the cache. `evicted` receives the evicted models in order.
  bool Insert(int model, double size_mb, std::vector<int>* evicted);
  void Pin(int model);
  void Unpin(int model);
  // Evicts the least recently used unpinned model; false when every model is pinned.
  bool EvictLru(std::vector<int>* evicted);
  size_t size() const { return entries_.size(); }
  // Resident models, least recently used first.
  std::vector<int> LruOrder() const;

 private:
  struct Entry {
    int model;
    double size_mb;
    uint64_t last_use;
    int pins;
  };
  const Entry* Find(int model) const;
  Entry* Find(int model);

  double capacity_mb_;
  double used_mb_ = 0;
  uint64_t clock_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace sloserve

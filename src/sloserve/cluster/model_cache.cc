#include "sloserve/cluster/model_cache.h"

#include <algorithm>

namespace sloserve {

const ModelCache::Entry* ModelCache::Find(int model) const {
  for (const Entry& e : entries_) {
    if (e.model == model) return &e;
  }
  return nullptr;
}

ModelCache::Entry* ModelCache::Find(int model) {
  return const_cast<Entry*>(static_cast<const ModelCache*>(this)->Find(model));
}

void ModelCache::Touch(int model) {
  if (Entry* e = Find(model)) e->last_use = ++clock_;
}

bool ModelCache::Insert(int model, double size_mb, std::vector<int>* evicted) {
  if (Entry* e = Find(model)) {
    e->last_use = ++clock_;
    return true;
  }
  if (size_mb > capacity_mb_) return false;
  // Room that evicting every unpinned model would free: refuse before evicting anything.
  double pinned_mb = 0;
  for (const Entry& e : entries_) {
    if (e.pins > 0) pinned_mb += e.size_mb;
  }
  if (pinned_mb + size_mb > capacity_mb_) return false;
  while (used_mb_ + size_mb > capacity_mb_) {
    if (!EvictLru(evicted)) return false;  // unreachable: checked above
  }
  entries_.push_back({model, size_mb, ++clock_, 0});
  used_mb_ += size_mb;
  return true;
}

bool ModelCache::EvictLru(std::vector<int>* evicted) {
  auto victim = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->pins == 0 && (victim == entries_.end() || it->last_use < victim->last_use)) {
      victim = it;
    }
  }
  if (victim == entries_.end()) return false;
  used_mb_ -= victim->size_mb;
  if (evicted != nullptr) evicted->push_back(victim->model);
  entries_.erase(victim);
  return true;
}

void ModelCache::Pin(int model) {
  if (Entry* e = Find(model)) ++e->pins;
}

void ModelCache::Unpin(int model) {
  if (Entry* e = Find(model); e != nullptr && e->pins > 0) --e->pins;
}

std::vector<int> ModelCache::LruOrder() const {
  std::vector<Entry> sorted = entries_;
  std::sort(sorted.begin(), sorted.end(),
            [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
  std::vector<int> out;
  for (const Entry& e : sorted) out.push_back(e.model);
  return out;
}

}  // namespace sloserve

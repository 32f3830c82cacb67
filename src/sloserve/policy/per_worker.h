#pragma once
// Per-worker policy state indexed by worker id. The engine can add workers while it runs
// (a plan's WorkerPlan with worker = kNoId; ids grow and are never reused), so a policy
// that sizes such state at Init from ctx.workers must grow it on demand: a worker first
// seen in a decision call gets freshly constructed state.
#include <vector>

#include "sloserve/core/ids.h"

namespace sloserve {

// The state of worker `id` in `state`, growing `state` (default-constructing the new
// entries) when `id` is beyond it.
template <typename T>
T& PerWorker(std::vector<T>& state, WorkerId id) {
  if (state.size() <= id) state.resize(static_cast<size_t>(id) + 1);
  return state[id];
}

}  // namespace sloserve

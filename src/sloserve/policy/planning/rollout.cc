#include "sloserve/policy/planning/rollout.h"

#include <utility>

namespace sloserve {

WorkerId CreateBeforeDelete::Serving(const RolloutTarget& t, const std::vector<WorkerView>& workers,
                                     const std::vector<bool>& taken) {
  for (size_t i = 0; i < workers.size(); ++i) {
    const WorkerView& w = workers[i];
    if (taken[i] || w.pinned != t.pinned || w.hardware != t.hardware) continue;
    if (t.pinned == kNoId && w.model != (t.model == kAnyModel ? kNoId : t.model)) continue;
    if (w.phase == WorkerPhase::kStarting || w.phase == WorkerPhase::kActive)
      return static_cast<WorkerId>(i);
  }
  return kNoId;
}

void CreateBeforeDelete::Start(TimePoint now, std::vector<RolloutTarget> targets,
                               const std::vector<WorkerView>& workers, DeploymentPlan* out) {
  targets_ = std::move(targets);
  std::vector<bool> taken = Untaken(workers);
  bool adding = false;
  for (const RolloutTarget& t : targets_) {
    const WorkerId w = Serving(t, workers, taken);
    if (w != kNoId) {
      taken[w] = true;
      // Still starting (from a rollout that timed out): wait for it like for a new one.
      adding = adding || workers[w].phase == WorkerPhase::kStarting;
      continue;
    }
    WorkerPlan p;  // worker = kNoId: a new one, serving after its loads come back
    p.hardware = t.hardware;
    p.cores = t.cores;
    p.pinned = t.pinned;
    p.model = t.model;
    p.load = t.load;
    p.prefetch = t.prefetch;
    p.quota = t.quota;
    out->workers.push_back(std::move(p));
    adding = true;
  }
  if (!adding) {
    Finish(workers, out);  // only settings change, or workers go away
    return;
  }
  out->change = true;
  in_progress_ = true;
  started_ = now;
}

void CreateBeforeDelete::Continue(TimePoint now, const std::vector<WorkerView>& workers,
                                  DeploymentPlan* out) {
  if (!in_progress_) return;
  std::vector<bool> taken = Untaken(workers);
  bool all_active = true;
  for (const RolloutTarget& t : targets_) {
    const WorkerId w = Serving(t, workers, taken);
    if (w == kNoId || workers[w].phase != WorkerPhase::kActive) {
      all_active = false;
      break;
    }
    taken[w] = true;
  }
  if (all_active || now - started_ >= timeout_) Finish(workers, out);
}

std::vector<bool> CreateBeforeDelete::Untaken(const std::vector<WorkerView>& workers) const {
  std::vector<bool> taken(workers.size(), false);
  for (WorkerId w : never_keep_) {
    if (w < taken.size()) taken[w] = true;
  }
  return taken;
}

void CreateBeforeDelete::Finish(const std::vector<WorkerView>& workers, DeploymentPlan* out) {
  std::vector<bool> taken = Untaken(workers);     // never-kept workers serve no target
  std::vector<bool> kept(workers.size(), false);  // they go below with the rest
  for (const RolloutTarget& t : targets_) {
    const WorkerId w = Serving(t, workers, taken);
    if (w == kNoId) continue;  // its load failed: the next plan replaces it
    taken[w] = true;
    kept[w] = true;
    WorkerPlan p;
    p.worker = workers[w].id;
    p.pinned = t.pinned;
    p.model = t.model;
    p.quota = t.quota;
    out->workers.push_back(std::move(p));
  }
  for (size_t i = 0; i < workers.size(); ++i) {
    if (kept[i] || workers[i].phase == WorkerPhase::kRetired) continue;
    WorkerPlan p;
    p.worker = workers[i].id;
    p.remove = true;  // drains its queue, then is retired
    p.pinned = workers[i].pinned;
    out->workers.push_back(std::move(p));
  }
  out->change = true;
  in_progress_ = false;
}

}  // namespace sloserve

#pragma once
// Create-before-delete rollout of a target deployment, shared by the planning policies
// that rebuild the pool every interval (infadapter, composed). Workers the targets need
// are added first (they serve only after their loads come back: the engine's worker
// lifecycle); only once every target has an active worker, or after `timeout`, do the
// kept workers get their new settings (pin, model, quota) and every other worker drain
// and go (remove = true). A worker that already serves a target is kept for it.
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/time.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

// One worker of a target deployment.
struct RolloutTarget {
  HardwareId hardware = 0;
  int cores = 0;             // new workers: 0 = the hardware's
  VariantId pinned = kNoId;  // kNoId: the model's selection policy chooses
  TaskId model = kNoId;      // kNoId: keep (a pinned variant implies its model); kAnyModel: shared
  std::vector<VariantId> load;      // new workers: what to load first (empty: the pinned variant)
  std::vector<VariantId> prefetch;  // new workers: what to load once serving, while idle
  double quota = 0;
};

class CreateBeforeDelete {
 public:
  explicit CreateBeforeDelete(Duration timeout) : timeout_(timeout) {}

  // Moves to `targets`: adds a worker (to `out`) for every target no worker serves; with
  // none added or still starting, finishes at once.
  void Start(TimePoint now, std::vector<RolloutTarget> targets,
             const std::vector<WorkerView>& workers, DeploymentPlan* out);
  // During a rollout: finishes it once every target's worker is active, or after the
  // timeout (a target whose worker failed to start is then left out). Else nothing.
  void Continue(TimePoint now, const std::vector<WorkerView>& workers, DeploymentPlan* out);

  // Workers never kept for a target: they drain and go at the first rollout's end (the
  // pool a config started with, which the planner replaces).
  void NeverKeep(std::vector<WorkerId> ids) { never_keep_ = std::move(ids); }

  bool in_progress() const { return in_progress_; }
  const std::vector<RolloutTarget>& targets() const { return targets_; }

  // The first worker not `taken` that serves `t` (starting or active, on its hardware,
  // pinned to its variant; for an unpinned target, unpinned and dedicated to its model,
  // or for a shared one (kAnyModel) dedicated to none); kNoId if none.
  static WorkerId Serving(const RolloutTarget& t, const std::vector<WorkerView>& workers,
                          const std::vector<bool>& taken);

 private:
  // The kept workers get their target's settings; every other worker not retired goes.
  void Finish(const std::vector<WorkerView>& workers, DeploymentPlan* out);
  // `taken`, sized to `workers`, with the never-kept ones taken already.
  std::vector<bool> Untaken(const std::vector<WorkerView>& workers) const;

  Duration timeout_;
  std::vector<RolloutTarget> targets_;
  std::vector<WorkerId> never_keep_;
  bool in_progress_ = false;
  TimePoint started_{};
};

}  // namespace sloserve

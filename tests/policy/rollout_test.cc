// Create before delete: targets no worker serves are added first; kept workers and the
// removal of the rest wait until every target's worker is active (or the timeout); an
// unpinned target matches an unpinned worker of its model on its type.
#include "sloserve/policy/planning/rollout.h"

#include <gtest/gtest.h>

namespace sloserve {
namespace {

WorkerView View(WorkerId id, HardwareId hw, VariantId pinned, TaskId model, WorkerPhase phase) {
  WorkerView w;
  w.id = id;
  w.hardware = hw;
  w.pinned = pinned;
  w.model = model;
  w.phase = phase;
  w.active = phase == WorkerPhase::kActive;
  return w;
}

RolloutTarget Target(HardwareId hw, VariantId pinned, TaskId model, double quota) {
  RolloutTarget t;
  t.hardware = hw;
  t.pinned = pinned;
  t.model = model;
  t.quota = quota;
  return t;
}

TEST(CreateBeforeDeleteTest, AddsFirstThenSwitchesAndRemoves) {
  CreateBeforeDelete r(Seconds(120));
  std::vector<WorkerView> workers = {View(0, 0, 3, 1, WorkerPhase::kActive),
                                     View(1, 0, 4, 1, WorkerPhase::kActive)};
  DeploymentPlan out;
  r.Start(kTimeZero, {Target(0, 3, 1, 0.5), Target(1, 3, 1, 0.5)}, workers, &out);
  ASSERT_TRUE(out.change);
  ASSERT_EQ(out.workers.size(), 1u);  // worker 0 serves the first target
  EXPECT_EQ(out.workers[0].worker, kNoId);
  EXPECT_EQ(out.workers[0].hardware, 1u);
  EXPECT_EQ(out.workers[0].model, 1u);
  EXPECT_TRUE(r.in_progress());
  workers.push_back(View(2, 1, 3, 1, WorkerPhase::kStarting));
  out.Clear();
  r.Continue(kTimeZero + Seconds(1), workers, &out);
  EXPECT_FALSE(out.change);  // the new worker still loads
  workers[2].phase = WorkerPhase::kActive;
  r.Continue(kTimeZero + Seconds(2), workers, &out);
  ASSERT_TRUE(out.change);
  EXPECT_FALSE(r.in_progress());
  ASSERT_EQ(out.workers.size(), 3u);
  EXPECT_EQ(out.workers[0].worker, 0u);
  EXPECT_DOUBLE_EQ(out.workers[0].quota, 0.5);
  EXPECT_EQ(out.workers[1].worker, 2u);
  EXPECT_EQ(out.workers[2].worker, 1u);
  EXPECT_TRUE(out.workers[2].remove);
}

TEST(CreateBeforeDeleteTest, TimesOutAndMatchesUnpinnedByModel) {
  CreateBeforeDelete r(Seconds(10));
  std::vector<WorkerView> workers = {View(0, 0, kNoId, 2, WorkerPhase::kActive)};
  DeploymentPlan out;
  // Worker 0 is unpinned but serves model 2, not 1: a new worker is added.
  r.Start(kTimeZero, {Target(0, kNoId, 1, 1)}, workers, &out);
  ASSERT_EQ(out.workers.size(), 1u);
  EXPECT_EQ(out.workers[0].worker, kNoId);
  out.Clear();
  r.Continue(kTimeZero + Seconds(10), workers, &out);  // it never started: timeout
  ASSERT_TRUE(out.change);
  ASSERT_EQ(out.workers.size(), 1u);
  EXPECT_TRUE(out.workers[0].remove);
  // A target an unpinned worker of its model serves: no new worker, settings at once.
  out.Clear();
  r.Start(kTimeZero + Seconds(20), {Target(0, kNoId, 2, 1)}, workers, &out);
  ASSERT_EQ(out.workers.size(), 1u);
  EXPECT_EQ(out.workers[0].worker, 0u);
  EXPECT_FALSE(out.workers[0].remove);
  EXPECT_FALSE(r.in_progress());
}

}  // namespace
}  // namespace sloserve

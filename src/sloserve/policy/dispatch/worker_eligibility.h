#pragma once
// Which workers may receive a query (docs/composed.md, "Dispatch"): an active worker that
// serves the query's model, i.e. is not dedicated to another model (WorkerView::model: a
// plan's dedication or its pinned variant's model) and whose hardware type has a profiled
// variant of it. Every dispatcher (and the placements that pick a worker) asks this, so a
// multi-model pool of mixed hardware, or of dedicated workers, never sends a query to a
// worker that would refuse it (`internal`) or reject it (`unservable`).
//
// A suite of one task that every hardware type serves needs no check (`uniform()`): a
// worker's model is then that task or none. Dispatchers test uniform() once per call and
// keep their single-model loop as it was.
#include <cstdint>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/policy/views.h"

namespace sloserve {

class WorkerEligibility {
 public:
  // Before Init (or with a null suite) every worker serves every query, as before models.
  void Init(const ProfileSuite* suite);

  bool uniform() const { return uniform_; }
  // Whether hardware `h` has a profiled variant of model `t`.
  bool HardwareServes(HardwareId h, TaskId t) const {
    return every_type_ || (h < hardware_ && t < tasks_ && servable_[h * tasks_ + t] != 0);
  }
  // Whether `w` serves model `t` (when active): its dedication and its hardware allow it.
  bool Serves(const WorkerView& w, TaskId t) const {
    return uniform_ || ((w.model == kNoId || w.model == t) && HardwareServes(w.hardware, t));
  }
  // Whether `w` may receive a query of model `t` now.
  bool Eligible(const WorkerView& w, TaskId t) const { return w.active && Serves(w, t); }

 private:
  bool uniform_ = true;
  bool every_type_ = true;  // every hardware type serves every task: only dedication counts
  size_t hardware_ = 0;
  size_t tasks_ = 0;
  std::vector<uint8_t> servable_;  // [h * tasks_ + t]
};

}  // namespace sloserve

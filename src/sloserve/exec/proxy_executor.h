#pragma once
// The executor of the model-aware cluster experiments (docs/model-aware.md): each worker is
// one inference proxy with one replica (the thesis' RayServe instance, section 4.6), so it
// runs one action at a time: loads and batches start in the order they are sent, each
// when the one before it on the worker has ended, and take the profile's time
// (ServiceTimeModel). An unload ends when it is sent (memory is free at once). Results are
// posted for the moment they end, in the driver's time; deterministic.
//
// Besides the results, it tells an observer what each worker does and until when, which the
// engine's views do not say: the end of the work queued on a worker (a cold batch's load
// and the inference after it), and every load (demand or ahead of demand) as it is sent.
#include <functional>
#include <span>
#include <vector>

#include "sloserve/engine/worker_protocol.h"
#include "sloserve/exec/service_time_model.h"

namespace sloserve {

class ProxyExecutor : public WorkerExecutor {
 public:
  struct LoadEvent {
    WorkerId worker = 0;
    VariantId variant = 0;
    TimePoint begin{}, end{};
  };
  struct RunEvent {
    WorkerId worker = 0;
    VariantId variant = 0;
    std::span<const Query> queries;  // valid only during the call
    TimePoint begin{}, end{};
  };
  struct Observer {
    std::function<void(const LoadEvent&)> on_load;
    std::function<void(const RunEvent&)> on_run;
    std::function<void(WorkerId, VariantId)> on_unload;
  };

  explicit ProxyExecutor(ServiceTimeModel model) : model_(std::move(model)) {}
  void set_observer(Observer o) { observer_ = std::move(o); }
  Duration Send(const WorkerAction& action) override;

  // When the work sent to worker `w` so far ends (its last load or batch); kTimeZero
  // for a worker that was never sent any.
  TimePoint busy_until(WorkerId w) const;
  // Sets the end of worker `w`'s work as its caller knows it beyond what was sent (a cold
  // batch's load is followed by its inference, which the engine sends only when the load
  // has ended). Reported by busy_until only: actions still start when the last one ends.
  void ExtendBusy(WorkerId w, TimePoint until);

 private:
  TimePoint& EndOf(WorkerId w);
  ServiceTimeModel model_;
  Observer observer_;
  std::vector<TimePoint> end_;       // per worker: when its last action sent ends
  std::vector<TimePoint> expected_;  // per worker: ExtendBusy's
};

}  // namespace sloserve

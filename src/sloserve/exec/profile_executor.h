#pragma once
// The executor of `sim` and of `serve` with emulated models: each action takes the time
// the profile says (ServiceTimeModel) and its result is posted for the moment it ends, in
// the driver's time (virtual in sim, the steady clock in serve). No CPU is burnt and no
// payload is read, so large suites can be served; the simulator and the emulated server
// are the same code.
#include <vector>

#include "sloserve/engine/worker_protocol.h"
#include "sloserve/exec/service_time_model.h"

namespace sloserve {

class ProfileExecutor : public WorkerExecutor {
 public:
  explicit ProfileExecutor(ServiceTimeModel model) : model_(std::move(model)) {}
  Duration Send(const WorkerAction& action) override;
  const ServiceTimeModel& model() const { return model_; }

 private:
  ServiceTimeModel model_;
};

}  // namespace sloserve

#include "sloserve/exec/simulated_executor.h"

namespace sloserve {

Duration SimulatedExecutor::Launch(const BatchLaunch& launch) {
  Duration d = model_.BatchDuration(launch);
  pending_.push({launch.start + d, seq_++, launch.worker, launch.batch});
  return d;
}

Completion SimulatedExecutor::PopCompletion() {
  Completion c = pending_.top();
  pending_.pop();
  return c;
}

}  // namespace sloserve

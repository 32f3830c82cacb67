#include "sloserve/remote/process_setup.h"

#include <absl/synchronization/mutex.h>

#include <cstdlib>

namespace sloserve::remote {

void PreferOwnQueuePolling() {
  setenv("GRPC_POLL_STRATEGY", "poll", /*overwrite=*/0);
}

void SkipMutexDeadlockDetection() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace sloserve::remote

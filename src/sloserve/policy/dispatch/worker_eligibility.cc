#include "sloserve/policy/dispatch/worker_eligibility.h"

#include "sloserve/profile/profile.h"

namespace sloserve {

void WorkerEligibility::Init(const ProfileSuite* suite) {
  uniform_ = true;
  if (suite == nullptr) return;
  hardware_ = suite->hardware().size();
  tasks_ = suite->tasks().size();
  servable_.assign(hardware_ * tasks_, 0);
  for (HardwareId h = 0; h < hardware_; ++h) {
    for (VariantId v = 0; v < suite->variants().size(); ++v) {
      const TaskId t = suite->variants()[v].task;
      if (t < tasks_ && !suite->BatchSizes(h, v).empty()) servable_[h * tasks_ + t] = 1;
    }
  }
  uniform_ = tasks_ <= 1;
  for (uint8_t s : servable_) uniform_ = uniform_ && s != 0;
}

}  // namespace sloserve

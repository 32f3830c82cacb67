#include "sloserve/policy/dispatch/worker_eligibility.h"

#include "sloserve/profile/profile.h"

namespace sloserve {

void WorkerEligibility::Init(const ProfileSuite* suite) {
  uniform_ = every_type_ = true;
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
  every_type_ = true;
  for (uint8_t s : servable_) every_type_ = every_type_ && s != 0;
  uniform_ = tasks_ <= 1 && every_type_;
}

}  // namespace sloserve

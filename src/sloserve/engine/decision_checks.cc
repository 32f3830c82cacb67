#include "sloserve/engine/decision_checks.h"

namespace sloserve {

BatchChecks::BatchChecks(const ProfileSuite& suite)
    : hardware_(suite.hardware().size()),
      variants_(suite.variants().size()),
      tasks_(suite.tasks().size()) {
  max_rows_.assign(hardware_ * variants_, 0);
  servable_.assign(hardware_ * tasks_, 0);
  for (HardwareId h = 0; h < hardware_; ++h) {
    for (VariantId v = 0; v < variants_; ++v) {
      if (suite.BatchSizes(h, v).empty()) continue;
      max_rows_[h * variants_ + v] = suite.MaxBatch(h, v);
      const TaskId t = suite.variants()[v].task;
      if (t < tasks_) servable_[h * tasks_ + t] = 1;
    }
  }
  for (const VariantSpec& v : suite.variants()) task_of_.push_back(v.task);
}

std::string BatchChecks::Describe(const ProfileSuite& suite, BatchFault fault, HardwareId h,
                                  VariantId v, const std::vector<uint32_t>& slots,
                                  const std::vector<Query>& table, int64_t rows) {
  auto task_name = [&](TaskId t) {
    return t < suite.tasks().size() ? "'" + suite.tasks()[t].name + "'" : "#" + std::to_string(t);
  };
  const std::string hw =
      h < suite.hardware().size() ? "'" + suite.hardware()[h].name + "'" : "#" + std::to_string(h);
  if (fault == BatchFault::kUnknownVariant) return "unknown variant " + std::to_string(v);
  const VariantSpec& spec = suite.variants()[v];
  const std::string var = "variant '" + spec.name + "'";
  switch (fault) {
    case BatchFault::kOtherModel:
      for (uint32_t s : slots) {
        if (table[s].task == spec.task) continue;
        return var + " (model " + task_name(spec.task) + ") for query " +
               std::to_string(table[s].id) + " of model " + task_name(table[s].task);
      }
      return var + " for a query of another model";
    case BatchFault::kNotProfiled:
      return var + " is not profiled on hardware " + hw;
    case BatchFault::kTooManyRows:
      return "a batch of " + std::to_string(rows) + " rows on " + var +
             ", whose largest profiled batch on hardware " + hw + " is " +
             std::to_string(suite.MaxBatch(h, v));
    default:
      return "";
  }
}

}  // namespace sloserve

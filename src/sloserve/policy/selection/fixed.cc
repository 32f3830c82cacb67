#include "sloserve/policy/selection/fixed.h"

#include <sstream>

#include "sloserve/policy/common_options.h"
#include "sloserve/policy/selection/variant_lookup.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace fixed_options {
const KeyDecl kMaxBatch{.name = "max_batch",
                        .type = KeyType::kInteger,
                        .default_value = "0",
                        .unit = "rows",
                        .min = 0,
                        .max = 2'147'483'647,
                        .help =
                            "cap on rows per batch; 0 (or above the profile's largest "
                            "batch) = the largest profiled batch"};
}  // namespace fixed_options

StatusOr<std::unique_ptr<SelectionPolicy>> FixedSelection::Create(const PolicyParams& params) {
  Options o;
  ASSIGN_OR_RETURN(std::string list, params.GetString(kVariantOption));
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) o.variants.push_back(item);
  }
  ASSIGN_OR_RETURN(int64_t max_batch, params.GetInt(fixed_options::kMaxBatch));
  o.max_batch = static_cast<int>(max_batch);
  return std::unique_ptr<SelectionPolicy>(new FixedSelection(std::move(o)));
}

Status FixedSelection::Init(const PolicyContext& ctx) {
  const ProfileSuite& suite = *ctx.suite;
  std::vector<VariantId> configured(suite.tasks().size(), kNoId);
  for (const std::string& name : options_.variants) {
    ASSIGN_OR_RETURN(VariantId v,
                     FindOptionVariant(suite, ctx.task, "fixed", "variant", name, false));
    TaskId t = suite.variants()[v].task;
    if (configured[t] != kNoId) {
      return InvalidArgumentError("fixed: two variants given for task '" + suite.tasks()[t].name +
                                  "'");
    }
    configured[t] = v;
  }
  choice_.assign(suite.hardware().size(), std::vector<SelectionDecision>(suite.tasks().size()));
  for (HardwareId hw = 0; hw < suite.hardware().size(); ++hw) {
    for (TaskId t = 0; t < suite.tasks().size(); ++t) {
      VariantId pick = configured[t];
      if (pick == kNoId) {  // most accurate variant profiled on this hardware
        for (VariantId v : suite.VariantsOfTask(t)) {
          if (suite.BatchSizes(hw, v).empty()) continue;
          if (pick == kNoId || suite.variants()[v].accuracy > suite.variants()[pick].accuracy)
            pick = v;
        }
      }
      if (pick == kNoId || suite.BatchSizes(hw, pick).empty()) continue;
      int max_rows = suite.MaxBatch(hw, pick);
      if (options_.max_batch > 0 && options_.max_batch < max_rows) max_rows = options_.max_batch;
      choice_[hw][t] = {pick, max_rows};
    }
  }
  return OkStatus();
}

SelectionDecision FixedSelection::Choose(const WorkerView& worker, const QueueView&,
                                         const Query& head, TimePoint) {
  return choice_[worker.hardware][head.task];
}

}  // namespace sloserve

#include "sloserve/policy/dispatch/kairos_common.h"

#include <algorithm>
#include <limits>

#include "sloserve/policy/params.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

namespace kairos_common_options {
const KeyDecl kQosFactor{.name = "qos_factor",
                         .type = KeyType::kNumber,
                         .default_value = "0.98",
                         .min = 0,
                         .max = 2,
                         .min_exclusive = true,
                         .help = "Eq. 5 safety factor on the QoS target (feasibility margin)"};
}  // namespace kairos_common_options

StatusOr<double> ParseQosFactor(const PolicyParams& params) {
  return params.GetDouble(kairos_common_options::kQosFactor);
}

Status HeteroDeployment::Init(const PolicyContext& ctx, const std::string& variant_option) {
  if (ctx.suite == nullptr) return InvalidArgumentError("no profile suite");
  const ProfileSuite& suite = *ctx.suite;
  variant_of_task.assign(suite.tasks().size(), kNoId);
  for (TaskId t = 0; t < suite.tasks().size(); ++t)
    variant_of_task[t] = suite.MostAccurateVariant(t);
  if (!variant_option.empty()) {
    auto v = suite.FindVariant(variant_option);
    if (!v)
      return InvalidArgumentError("option 'variant': unknown variant '" + variant_option + "'");
    variant_of_task[suite.variants()[*v].task] = *v;
  }
  if (ctx.task >= variant_of_task.size() || variant_of_task[ctx.task] == kNoId) {
    return InvalidArgumentError("the deployment's task has no variant");
  }
  const VariantId v = variant_of_task[ctx.task];
  variant = v;
  const size_t num_hw = suite.hardware().size();
  std::vector<bool> present(num_hw, false);
  bool any = false;
  for (const WorkerView& w : ctx.workers) {
    if (w.hardware < present.size()) present[w.hardware] = any = true;
  }
  if (!any) return InvalidArgumentError("no workers");
  if (suite.tasks().size() == 1) {  // one model: every present type must serve it
    for (HardwareId h = 0; h < num_hw; ++h) {
      if (present[h] && suite.MaxBatch(h, v) <= 0) {
        return InvalidArgumentError("hardware '" + suite.hardware()[h].name +
                                    "' has no latency profile for variant '" +
                                    suite.variants()[v].name + "'");
      }
    }
  }
  eligibility.Init(&suite);
  suite_ = &suite;
  task_ = ctx.task;
  present_ = std::move(present);
  Compute();
  return OkStatus();
}

void HeteroDeployment::Observe(const std::vector<WorkerView>& workers) {
  bool added = false;
  for (const WorkerView& w : workers) {
    if (w.phase == WorkerPhase::kRetired || w.hardware >= present_.size() || present_[w.hardware])
      continue;
    present_[w.hardware] = added = true;
  }
  if (added) Compute();
}

void HeteroDeployment::Compute() {
  const ProfileSuite& suite = *suite_;
  const std::vector<bool>& present = present_;
  const size_t num_hw = suite.hardware().size();
  task_coefficient.assign(suite.tasks().size(), std::vector<double>(num_hw, 0.0));
  task_variant.assign(suite.tasks().size(), std::vector<VariantId>(num_hw, kNoId));
  coefficient.assign(num_hw, 0.0);
  for (TaskId t = 0; t < suite.tasks().size(); ++t) {
    if (variant_of_task[t] == kNoId) continue;
    std::vector<VariantId>& tv = task_variant[t];
    int largest = std::numeric_limits<int>::max();
    for (HardwareId h = 0; h < num_hw; ++h) {
      if (!present[h]) continue;
      if (suite.MaxBatch(h, variant_of_task[t]) > 0) {
        tv[h] = variant_of_task[t];
      } else {  // the task's most accurate variant profiled on this type
        for (VariantId x : suite.VariantsOfTask(t)) {
          if (suite.MaxBatch(h, x) > 0 &&
              (tv[h] == kNoId || suite.variants()[x].accuracy > suite.variants()[tv[h]].accuracy))
            tv[h] = x;
        }
      }
      if (tv[h] != kNoId) largest = std::min(largest, suite.MaxBatch(h, tv[h]));
    }
    if (largest == std::numeric_limits<int>::max()) continue;  // no present type serves it
    std::vector<double> lat(num_hw, 0.0);
    double best = std::numeric_limits<double>::infinity();
    HardwareId task_base = 0;
    for (HardwareId h = 0; h < num_hw; ++h) {
      if (tv[h] == kNoId) continue;
      const LatencyDistribution* d = suite.ServiceLatency(h, tv[h], largest);
      lat[h] = d ? static_cast<double>(std::max<int64_t>(1, d->Mean().count())) : 1.0;
      if (lat[h] < best) {
        best = lat[h];
        task_base = h;
      }
    }
    for (HardwareId h = 0; h < num_hw; ++h) {
      if (tv[h] == kNoId) continue;
      task_coefficient[t][h] = h == task_base ? 1.0 : best / lat[h];
      coefficient[h] = std::max(coefficient[h], task_coefficient[t][h]);
    }
    if (t == task_) {
      base = task_base;
      largest_query = largest;
    }
  }
  types.clear();
  for (HardwareId h = 0; h < num_hw; ++h) {
    if (coefficient[h] > 0) types.push_back(h);
  }
  std::stable_sort(types.begin(), types.end(),
                   [&](HardwareId a, HardwareId b) { return coefficient[a] > coefficient[b]; });
}

void HeteroDeployment::IdleFastestFirst(const std::vector<WorkerView>& workers,
                                        std::vector<size_t>* idle) const {
  idle->clear();
  for (size_t j = 0; j < workers.size(); ++j) {
    const WorkerView& w = workers[j];
    if (w.active && !w.busy && w.queue_length == 0 && w.hardware < coefficient.size() &&
        coefficient[w.hardware] > 0) {
      idle->push_back(j);
    }
  }
  std::stable_sort(idle->begin(), idle->end(), [&](size_t a, size_t b) {
    return coefficient[workers[a].hardware] > coefficient[workers[b].hardware];
  });
}

}  // namespace sloserve

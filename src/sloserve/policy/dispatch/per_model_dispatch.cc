#include "sloserve/policy/dispatch/per_model_dispatch.h"

#include "sloserve/core/did_you_mean.h"
#include "sloserve/policy/params.h"
#include "sloserve/policy/registry.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

namespace per_model_options {
const KeyDecl kDefault{
    .name = "default_dispatch",
    .type = KeyType::kString,
    .default_value = "jsq",
    .help = "per_model: the dispatcher of the models model_dispatch does not name"};
const KeyDecl kModels{.name = "model_dispatch",
                      .type = KeyType::kString,
                      .help = "per_model: \"model=dispatcher,...\" (e.g. recsys=kairos)"};
}  // namespace per_model_options

StatusOr<std::unique_ptr<DispatchPolicy>> PerModelDispatch::Create(const PolicyParams& params) {
  ASSIGN_OR_RETURN(const std::string fallback, params.GetString(per_model_options::kDefault));
  ASSIGN_OR_RETURN(const std::string models, params.GetString(per_model_options::kModels));
  auto d = std::unique_ptr<PerModelDispatch>(new PerModelDispatch());
  ASSIGN_OR_RETURN(d->model_dispatch_,
                   ParseNameValueList(models, "per_model: option 'model_dispatch'"));
  d->names_ = {fallback};
  for (const auto& [model, name] : d->model_dispatch_) {
    (void)model;
    if (name == "per_model")
      return InvalidArgumentError("per_model: a dispatcher of its own cannot be per_model");
    d->names_.push_back(name);
  }
  d->values_ = params.values();
  return std::unique_ptr<DispatchPolicy>(std::move(d));
}

Status PerModelDispatch::Init(const PolicyContext& ctx) {
  // The dispatchers are made here, not in Create: the registry runs every factory while it
  // is being built (to list their options), and Create asking it then would recurse.
  parts_.clear();
  const PolicyRegistry& registry = PolicyRegistry::Builtin();
  const PolicyParams params("dispatch policy 'per_model'", values_);
  for (const std::string& name : names_) {
    bool made = false;
    for (const Part& p : parts_) made = made || p.name == name;
    if (made) continue;
    ASSIGN_OR_RETURN(std::unique_ptr<DispatchPolicy> policy, registry.MakeDispatch(name, params));
    if (policy->shared_queue()) {
      return InvalidArgumentError("per_model: '" + name +
                                  "' keeps queries central (shared queue); it cannot dispatch "
                                  "one model of several");
    }
    parts_.push_back(Part{name, std::move(policy), {}});
  }
  const ProfileSuite& suite = *ctx.suite;
  part_of_task_.assign(suite.tasks().size(), 0);
  for (const auto& [model, name] : model_dispatch_) {
    const std::optional<TaskId> t = suite.FindTask(model);
    if (!t) {
      std::vector<std::string> known;
      for (const TaskSpec& task : suite.tasks()) known.push_back(task.name);
      return InvalidArgumentError("per_model: option 'model_dispatch': no model '" + model + "'" +
                                  DidYouMean(model, known));
    }
    for (size_t k = 0; k < parts_.size(); ++k) {
      if (parts_[k].name == name) part_of_task_[*t] = k;
    }
  }
  for (Part& p : parts_) RETURN_IF_ERROR(p.policy->Init(ctx).WithPrefix("per_model: " + p.name));
  return OkStatus();
}

void PerModelDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                              TimePoint now, std::vector<Assignment>* out) {
  if (parts_.size() == 1) {  // one dispatcher for every model: no partition to make
    parts_[0].policy->Assign(pending, workers, now, out);
    return;
  }
  // Each dispatcher sees its models' queries as a queue of its own (a QueueView over a
  // copy, in the same order), and its positions are mapped back to the pending queue's.
  pending_.clear();
  for (Part& p : parts_) p.positions.clear();
  for (size_t i = 0; i < pending.size(); ++i) {
    const Query& q = pending.at(i);
    pending_.push_back(q);
    const size_t k = q.task < part_of_task_.size() ? part_of_task_[q.task] : 0;
    parts_[k].positions.push_back(static_cast<uint32_t>(i));
  }
  for (Part& p : parts_) {
    if (p.positions.empty()) continue;
    scratch_.clear();
    p.policy->Assign(QueueView(&p.positions, &pending_), workers, now, &scratch_);
    for (const Assignment& a : scratch_) {
      if (a.position < p.positions.size()) out->push_back({p.positions[a.position], a.worker});
    }
  }
}

}  // namespace sloserve

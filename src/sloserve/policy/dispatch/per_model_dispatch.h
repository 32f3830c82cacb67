#pragma once
// Several dispatchers on one multi-model pool (docs/composed.md, "Dispatch per model"):
// each model's queries go to the dispatcher named for it, every other model's to the
// default one. Why: Kairos' dispatcher (and its baselines) hands one query at a time to an
// idle instance, as recommendation queries run alone (Kairos section 5); on models that
// batch (images, text, ORLOJ's) that starves the batches, so the composition runs Kairos
// for the recommendation model only and least-loaded dispatch for the rest.
// Options: default_dispatch (jsq), model_dispatch ("model=dispatcher,..."). A shared-queue
// dispatcher
// (`shared`) cannot be one of them: it keeps every query central.
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/name_value_list.h"

namespace sloserve {

class PerModelDispatch : public DispatchPolicy {
 public:
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);

  Status Init(const PolicyContext& ctx) override;
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

 private:
  struct Part {
    std::string name;  // the dispatcher's
    std::unique_ptr<DispatchPolicy> policy;
    std::deque<uint32_t> positions;  // this decision's pending queries it decides, by position
  };
  NameValueList model_dispatch_;               // as configured: model -> dispatcher name
  std::vector<std::string> names_;             // the default's, then model_dispatch's
  std::map<std::string, std::string> values_;  // the entry's options, for the dispatchers
  std::vector<Part> parts_;                    // [0] = the default
  std::vector<size_t> part_of_task_;           // TaskId -> index into parts_
  std::vector<Query> pending_;                 // this decision's pending queries, in queue order
  std::vector<Assignment> scratch_;
};

}  // namespace sloserve

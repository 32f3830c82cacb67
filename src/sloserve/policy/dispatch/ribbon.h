#pragma once
// Ribbon query distribution, as the Kairos paper characterises it (HPDC'23, section 7,
// "Competing query distribution techniques"; Ribbon: Li et al., SC'21): first come
// first served from a central queue, preferring instances of the base type when several
// are available. Each idle active instance with an empty queue takes the oldest pending
// query; idle instances are filled fastest type first (largest heterogeneity
// coefficient, kairos_common.h), ties by worker id. No latency prediction, no QoS check.
// Ribbon's Bayesian-optimisation configuration search is not part of this policy.
// On a multi-model pool an idle instance takes the oldest query of a model it serves
// (kairos_common.h). Options: variant (the task's most accurate). Use with batching
// `single`.
#include <memory>
#include <vector>

#include "sloserve/policy/dispatch/kairos_common.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class RibbonDispatch : public DispatchPolicy {
 public:
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);
  explicit RibbonDispatch(std::string variant) : variant_(std::move(variant)) {}
  Status Init(const PolicyContext& ctx) override;
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

 private:
  std::string variant_;
  HeteroDeployment deployment_;
  std::vector<size_t> idle_;
  std::vector<uint8_t> taken_;
};

}  // namespace sloserve

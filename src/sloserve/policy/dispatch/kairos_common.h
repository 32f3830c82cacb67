#pragma once
// Shared pieces of the heterogeneous dispatchers (kairos, ribbon, drs, clkwrk): which
// variant serves each task, and each hardware type's heterogeneity coefficient (Kairos,
// HPDC'23, section 5.1, Definition 1).
//
// C_j = latency of the largest query on the base type / latency of it on type j, where
// the base type is the deployment's type with the lowest latency for that query
// (C = 1) and "the largest query" is the largest batch profiled on every type of the
// deployment (1000 rows in kairos-recsys). Latencies are profile means of the service
// time (latency + data loading). Coefficients always come from the profile, also when
// the dispatcher learns latencies online: they are a property of the configuration.
//
// Multi-model pools (docs/composed.md, "Dispatch"): each task has its own coefficients
// over the present types that profile one of its variants (the variant of the task where
// profiled, else the most accurate one profiled there), and a query is dispatched only to
// workers that serve its model (`eligibility`). A one-task suite keeps the single-model
// rule: every present type must profile the task's variant.
#include <string>
#include <vector>

#include "sloserve/core/ids.h"

#include "sloserve/core/status.h"
#include "sloserve/policy/dispatch/worker_eligibility.h"
#include "sloserve/policy/views.h"

namespace sloserve {

class PolicyParams;
class ProfileSuite;

// The `qos_factor` option of the QoS-aware heterogeneous dispatchers (kairos, clkwrk): the
// safety factor on the QoS target, default 0.98 (Kairos section 5.1), in (0, 2].
StatusOr<double> ParseQosFactor(const PolicyParams& params);

struct HeteroDeployment {
  std::vector<VariantId> variant_of_task;  // by TaskId: kNoId if the task has no variant
  // by HardwareId: C_j, 0 if no worker of that type (several tasks: the largest of theirs)
  std::vector<double> coefficient;
  VariantId variant = kNoId;      // the deployment task's variant
  HardwareId base = 0;            // the type with C = 1
  std::vector<HardwareId> types;  // types present, fastest (largest C) first
  int largest_query = 0;          // rows used for the coefficients
  // Per task, by HardwareId: its coefficient and the variant estimated for it there (0 and
  // kNoId where the type is absent or profiles none of its variants).
  std::vector<std::vector<double>> task_coefficient;
  std::vector<std::vector<VariantId>> task_variant;
  WorkerEligibility eligibility;

  // The variant of each task is the `variant` option when given, else the task's most
  // accurate (ties: first) variant, as the `fixed` selection picks it.
  Status Init(const PolicyContext& ctx, const std::string& variant_option);
  // Types a plan added since (a worker of a type not present before): their coefficients
  // are computed as if present at Init. Cheap when nothing is new; call before deciding.
  void Observe(const std::vector<WorkerView>& workers);
  bool IsBase(HardwareId hw) const { return coefficient[hw] >= 1.0; }
  double CoefficientFor(TaskId t, HardwareId hw) const {
    return t < task_coefficient.size() && hw < task_coefficient[t].size() ? task_coefficient[t][hw]
                                                                          : 0.0;
  }
  VariantId VariantFor(TaskId t, HardwareId hw) const {
    return t < task_variant.size() && hw < task_variant[t].size() ? task_variant[t][hw] : kNoId;
  }
  // Indices of active, idle instances with an empty queue, fastest type (largest C)
  // first, in worker order within a type.
  void IdleFastestFirst(const std::vector<WorkerView>& workers, std::vector<size_t>* idle) const;

 private:
  void Compute();  // everything above from the present types
  const ProfileSuite* suite_ = nullptr;
  TaskId task_ = 0;
  std::vector<bool> present_;  // by HardwareId
};

}  // namespace sloserve

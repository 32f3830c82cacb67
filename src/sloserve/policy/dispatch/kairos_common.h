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
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/policy/views.h"

namespace sloserve {

class PolicyParams;

// The `qos_factor` option of the QoS-aware heterogeneous dispatchers (kairos, clkwrk): the
// safety factor on the QoS target, default 0.98 (Kairos section 5.1), in (0, 2].
StatusOr<double> ParseQosFactor(const PolicyParams& params);

struct HeteroDeployment {
  std::vector<VariantId> variant_of_task;  // by TaskId: kNoId if the task has no variant
  std::vector<double> coefficient;         // by HardwareId: C_j, 0 if no worker of that type
  VariantId variant = kNoId;               // the deployment task's variant
  HardwareId base = 0;                     // the type with C = 1
  std::vector<HardwareId> types;           // types present, fastest (largest C) first
  int largest_query = 0;                   // rows used for the coefficients

  // The variant of each task is the `variant` option when given, else the task's most
  // accurate (ties: first) variant, as the `fixed` selection picks it.
  Status Init(const PolicyContext& ctx, const std::string& variant_option);
  bool IsBase(HardwareId hw) const { return coefficient[hw] >= 1.0; }
  // Indices of active, idle instances with an empty queue, fastest type (largest C)
  // first, in worker order within a type.
  void IdleFastestFirst(const std::vector<WorkerView>& workers, std::vector<size_t>* idle) const;
};

}  // namespace sloserve

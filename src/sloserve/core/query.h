#pragma once
// One inference request as the engine sees it. Plain value type; the input tensors live
// in a PayloadStore and the engine carries only their handle (executors resolve it).
#include <cstdint>

#include "sloserve/core/ids.h"
#include "sloserve/core/time.h"

namespace sloserve {

struct Query {
  QueryId id = 0;
  TaskId task = 0;
  AppId app = 0;
  int32_t size = 1;  // rows in the request (Kairos' "query batch size"); 1 for RAMSIS/ORLOJ
  // Triton's request priority: 1 = highest, 2 the next, ...; 0 = the deployment's default
  // level (the engine resolves it at Submit; docs/admission.md).
  int32_t priority = 0;
  TimePoint arrival{};
  TimePoint deadline{};       // arrival + SLO
  uint64_t cookie = 0;        // frontend's handle to answer the client; 0 in simulation
  PayloadHandle payload = 0;  // input tensors in the payload store; 0 = none (simulation)

  Duration slo() const { return deadline - arrival; }
};

}  // namespace sloserve

#pragma once
// What happened to one query: the per-query metric row, identical for sim and serve.
#include <cstdint>

#include "sloserve/core/ids.h"
#include "sloserve/core/time.h"

namespace sloserve {

enum class DropReason : uint8_t {
  kNone = 0,
  kQueueFull,      // admission: the central or worker queue was at its bound
  kPolicy,         // the batching policy dropped it (e.g. expired, cannot meet deadline)
  kUnservable,     // no variant/profile can serve it (too many rows, task not profiled)
  kShutdown,       // the engine stopped before serving it
  kInternal,       // a policy returned an invalid decision for it (logged, naming the policy)
  kExecutorError,  // its batch (or the load before it) failed on every attempt allowed
  kExpired,        // its deadline passed before it could run (a failed batch, or admission)
  kShed,           // admission refused it: its deadline could not be met given the queue
  kCancelled,      // its client went away while it was queued
};
const char* DropReasonName(DropReason r);

struct QueryRecord {
  QueryId id = 0;
  TaskId task = 0;
  AppId app = 0;
  int32_t size = 1;
  int32_t priority = 1;  // resolved level, 1 = highest
  uint64_t cookie = 0;
  PayloadHandle payload = 0;  // input tensors
  PayloadHandle output = 0;   // output tensors from the executor (0 = none)
  VariantId variant = kNoId;
  WorkerId worker = kNoId;
  int32_t batch_size = 0;  // queries in its batch
  TimePoint arrival{};
  TimePoint deadline{};
  TimePoint start{};   // batch start (after any cold start is included in service)
  TimePoint finish{};  // completion or drop time
  // The executor's own measure of its batch's execution (ActionResult end - begin); -1 =
  // none (dropped). service_time() - exec_time is the hand-off: the action's way to the
  // executor and its result's way back to the engine (0 in sim).
  Duration exec_time{-1};
  bool dropped = false;
  DropReason drop_reason = DropReason::kNone;
  bool met_slo = false;

  Duration queue_time() const { return start - arrival; }
  Duration service_time() const { return finish - start; }
  Duration latency() const { return finish - arrival; }
};

}  // namespace sloserve

#pragma once
// The boundary between the network frontends and the scheduling engine. The HTTP
// frontend parses and validates a KServe v2 request, then hands an InferRequest to the
// backend; the backend calls `done` exactly once, from any thread, with the outcome.
// The frontend never touches engine state.
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/core/payload_store.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"

namespace sloserve {

struct TaskInfo {
  std::string name;
  std::vector<std::string> variants;  // versions the task may be answered by
  std::string input_name;
  std::string input_datatype;        // KServe v2 datatype, e.g. "FP32"
  std::vector<int64_t> input_shape;  // -1 = any (batch dimension)
  // The declared output (requests may ask for it by name; others are refused).
  std::string output_name = "output";
  std::string output_datatype = "FP32";
  std::vector<int64_t> output_shape = {-1, 1};
  Duration default_slo{};
  // The most rows one request may have at default_slo (a variant is profiled to finish
  // them within it); metadata and /config state it as max_batch_size. 0 = not stated.
  int32_t max_batch_size = 0;
  std::vector<std::string> apps;  // known app names; empty = any
  int32_t priority_levels = 1;    // request `priority` 1..levels (1 = highest), 0 = default
  // The fastest achievable latency (the fastest variant alone at batch 1, as the config's
  // SLO check measures it): a request's slo_ms below it is refused. 0 = not known.
  Duration fastest_latency{};
  std::string fastest_variant;  // e.g. "shufflenet_v2_x0_5 on cpu-8c", for the error
};

// A per-request SLO that no variant can meet is a client error, like the same SLO in a
// config: the message names the fastest achievable latency.
inline Status CheckSloAchievable(Duration slo, const TaskInfo& task) {
  if (task.fastest_latency <= Duration::zero() || slo >= task.fastest_latency) return OkStatus();
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "parameter 'slo_ms' %.3f ms is below the fastest achievable latency %.3f ms of "
                "model '%s' (%s at batch 1): no variant can meet it",
                ToMillis(slo), ToMillis(task.fastest_latency), task.name.c_str(),
                task.fastest_variant.c_str());
  return InvalidArgumentError(buf);
}

// Checks a request's `priority` parameter (Triton's schedule-policy extension: 0 = the
// default level, 1 = highest) against the task's levels; the error names the parameter.
inline Status CheckPriority(int64_t priority, const TaskInfo& task) {
  if (priority < 0 || priority > task.priority_levels) {
    return InvalidArgumentError(
        "parameter 'priority' must be an integer in [0, " + std::to_string(task.priority_levels) +
        "] (0 = default, 1 = highest; engine.priority_levels), got " + std::to_string(priority));
  }
  return OkStatus();
}

// A task's place in the model repository's lifecycle. Only kLoaded serves requests.
enum class ModelState { kLoaded, kLoading, kUnloading, kUnloaded };

// Triton's repository index state names: READY, LOADING, UNLOADING, UNAVAILABLE.
inline const char* ModelStateName(ModelState s) {
  switch (s) {
    case ModelState::kLoaded:
      return "READY";
    case ModelState::kLoading:
      return "LOADING";
    case ModelState::kUnloading:
      return "UNLOADING";
    case ModelState::kUnloaded:
      return "UNAVAILABLE";
  }
  return "UNAVAILABLE";
}

struct InferRequest {
  std::string task;
  std::string app;       // empty = default app
  Duration slo{};        // validated: > 0 and <= the frontend's maximum
  int32_t rows = 1;      // size of the batch dimension of the input
  int32_t priority = 0;  // validated by CheckPriority: 0 = default level, 1 = highest
  // The input tensors, validated against the task's declared input (element bytes as
  // documented at Tensor). The backend owns them from Submit on.
  TensorSet inputs;
  // Set by the frontend when the client disconnected before its answer (then it calls
  // InferenceBackend::ClientGone); a backend may drop the request if it has not run yet.
  std::shared_ptr<std::atomic<bool>> client_gone;
};

struct InferOutcome {
  Status status;  // non-OK: the request was rejected or dropped, message says why
  // Why a non-OK request was dropped, a static drop-reason name ("policy", "queue_full",
  // "shed", "expired", "executor_error", ...; engine/query_record.h); null = not said.
  const char* reason = nullptr;
  std::string variant;      // the variant that answered
  std::string worker;       // worker name, e.g. "w3"
  std::string hardware;     // the worker's hardware (instance) type; empty = not reported
  Duration queue_time{};    // arrival at the engine -> batch start
  Duration compute_time{};  // batch start -> completion
  // Of compute_time, the executor's own measure of the batch's execution; the rest is the
  // hand-off to the executor and back. -1 = not reported.
  Duration exec_time{-1};
  int32_t batch_size = 0;
  bool met_slo = false;
  // The output tensors from the executor; empty when it computes none (the emulated
  // executor), in which case the frontend answers with a zero output of the batch's rows.
  TensorSet outputs;
};

class InferenceBackend {
 public:
  virtual ~InferenceBackend() = default;
  virtual std::vector<TaskInfo> Tasks() const = 0;
  virtual bool Ready() const = 0;
  // Why Ready() is false (e.g. "starting: RAMSIS policy set 12/40, ~30 s left"); shown by
  // /v2/health/ready (400) and in 503 answers to requests. Empty when ready or when there is
  // nothing to say.
  virtual std::string NotReadyReason() const { return ""; }
  // While Ready(): why it serves in a degraded way, if it does (e.g. "serving the fastest
  // variant while the RAMSIS policy set is generated: 12/40"); /v2/health/ready shows it
  // as "degraded". Empty = fully ready.
  virtual std::string ReadyNote() const { return ""; }
  // Takes ownership of the request; `done` is invoked exactly once.
  virtual void Submit(InferRequest request, std::function<void(InferOutcome)> done) = 0;
  struct Submission {
    InferRequest request;
    std::function<void(InferOutcome)> done;
  };
  // Several requests, in order, each as if by Submit; leaves `batch` empty. A backend
  // with a thread of its own wakes it once for all of them (the HTTP server hands over
  // what one turn of its event loop read). Default: Submit each.
  virtual void SubmitAll(std::vector<Submission>& batch) {
    for (Submission& s : batch) Submit(std::move(s.request), std::move(s.done));
    batch.clear();
  }
  // The backend's own metrics in Prometheus text format, appended to GET /metrics.
  virtual std::string PrometheusMetrics() const { return ""; }
  // Some request's `client_gone` was set: queued ones may be dropped (their `done` is
  // still called once). Any thread; default: ignored (the request is served anyway).
  virtual void ClientGone() {}

  // The model repository extension (docs/protocol.md "Model repository"): where `task`
  // (one of Tasks()) is in its lifecycle. Default: always loaded.
  virtual ModelState StateOf(std::string_view task) const {
    (void)task;
    return ModelState::kLoaded;
  }
  // Loads (`load`) or unloads `task` on the workers; `done` is invoked exactly once, from
  // any thread, when it is done (OK) or failed (why). Requests for a task that is not
  // loaded are refused. Default: not supported (Unimplemented).
  virtual void SetModelLoaded(const std::string& task, bool load,
                              std::function<void(Status)> done) {
    (void)task;
    (void)load;
    done(UnimplementedError("this backend cannot load or unload models"));
  }
};

}  // namespace sloserve

#pragma once
// KServe v2 / Open Inference Protocol request handling, independent of the transport.
// The HTTP session hands over (method, target, body); the handler either answers at
// once (health, metadata, errors) or returns a validated InferCall for the session to
// submit to the InferenceBackend, and later renders the backend's InferOutcome.
// Endpoints, validation rules and the StatusCode -> HTTP mapping: docs/protocol.md.
//
// Thread-safety: all methods are const and may be called from any io thread at once.
// The task table is a snapshot taken at construction.
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/server/inference_backend.h"
#include "sloserve/server/server_metrics.h"

namespace sloserve {

enum class HttpMethod { kGet, kPost, kOther };

struct HttpResponse {
  int status = 200;
  std::string body;
  const char* content_type = "application/json";
  const char* allow = nullptr;        // "Allow" header of a 405
  const char* retry_after = nullptr;  // "Retry-After" seconds of a 429/503
};

// A validated inference request plus what the response needs to echo.
struct InferCall {
  InferRequest request;
  std::string id;  // the client's request id
  bool has_id = false;
};

// Maps an engine StatusCode to the HTTP status of the error response.
int HttpStatusFromCode(StatusCode code);

// Parses and validates a POST /v2/models/{task}/infer body against the task's declared
// input. Errors are InvalidArgument with a message naming the offending field.
StatusOr<InferCall> ParseInferRequest(const TaskInfo& task, std::string_view body,
                                      Duration max_slo);

class KServeHandler {
 public:
  struct Options {
    Duration max_slo = Seconds(60);
    std::string server_version = "0.1.0";
  };

  // `backend` (for Ready()) and `metrics` (for /metrics, may be null) must outlive this.
  KServeHandler(Options options, std::vector<TaskInfo> tasks, const InferenceBackend* backend,
                const ServerMetrics* metrics);

  // Either an immediate response or a call to submit to the backend.
  std::variant<HttpResponse, InferCall> Route(HttpMethod method, std::string_view target,
                                              std::string_view body) const;

  // The response to a finished call: 200 with outputs and timing, or the mapped error.
  HttpResponse RenderOutcome(const InferCall& call, const InferOutcome& outcome) const;

 private:
  struct TaskEntry {
    TaskInfo info;
    std::string metadata_json;  // GET /v2/models/{task}, rendered once
  };
  const TaskEntry* FindTask(std::string_view name) const;
  std::variant<HttpResponse, InferCall> RouteModel(HttpMethod method, std::string_view rest,
                                                   std::string_view body) const;

  Options options_;
  std::map<std::string, TaskEntry, std::less<>> tasks_;
  std::string server_metadata_json_;
  const InferenceBackend* backend_;
  const ServerMetrics* metrics_;
};

}  // namespace sloserve

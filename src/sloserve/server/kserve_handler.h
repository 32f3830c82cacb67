#pragma once
// KServe v2 / Open Inference Protocol request handling, independent of the transport.
// The HTTP session hands over (method, target, body); the handler either answers at
// once (health, metadata, errors) or returns a validated InferCall for the session to
// submit to the InferenceBackend, and later renders the backend's InferOutcome.
// Endpoints, validation rules and the StatusCode -> HTTP mapping: docs/protocol.md.
//
// Thread-safety: all methods are const and may be called from any io thread at once.
// The task table is a snapshot taken at construction.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/server/access_control.h"
#include "sloserve/server/inference_backend.h"
#include "sloserve/server/process_metrics.h"
#include "sloserve/server/request_metrics.h"
#include "sloserve/server/server_metrics.h"

namespace sloserve {

// kHead is answered as kGet; the transport sends the headers without the body.
enum class HttpMethod { kGet, kHead, kPost, kOther };

struct HttpResponse {
  int status = 200;
  std::string body;
  const char* content_type = "application/json";
  const char* allow = nullptr;             // "Allow" header of a 405
  const char* retry_after = nullptr;       // "Retry-After" seconds of a 429/503
  const char* www_authenticate = nullptr;  // "WWW-Authenticate" challenge of a 401
  // Binary tensor data in the body: the JSON part's length, sent as the
  // "Inference-Header-Content-Length" header (0 = the body is JSON only).
  size_t inference_header_length = 0;
};

// An output the client asked for by name (KServe v2 request "outputs").
struct RequestedOutput {
  std::string name;
  bool binary = false;  // parameters.binary_data: send it as binary tensor data
};

// A validated inference request plus what the response needs to echo.
struct InferCall {
  InferRequest request;
  std::string id;  // the client's request id
  bool has_id = false;
  std::vector<RequestedOutput> outputs;  // empty = every output
  bool binary_outputs = false;           // parameters.binary_data_output: all outputs binary
  size_t model_index = 0;                // the handler's model, for its statistics
  std::vector<std::string> warnings;     // the response's "warnings" (unknown parameters)
  std::chrono::steady_clock::time_point received{};
};

// A model repository load or unload (POST /v2/repository/models/{m}/load|unload) for the
// session to hand to InferenceBackend::SetModelLoaded, then RenderRepository.
struct RepositoryCall {
  std::string model;
  bool load = true;
};

// What Route decides: an answer now, an inference call, or a repository call.
using Routed = std::variant<HttpResponse, InferCall, RepositoryCall>;

// Maps an engine StatusCode to the HTTP status of the error response.
int HttpStatusFromCode(StatusCode code);

// Parses and validates a POST /v2/models/{task}/infer body against the task's declared
// input and output. `json_length` is the Inference-Header-Content-Length header (empty:
// the body is all JSON; else its first `json_length` bytes are, and binary tensor data
// follows). Errors are InvalidArgument with a message naming the offending field.
// The common shape (one FP32 input, at most an id and parameters.slo_ms) is read by a
// strict scanner (infer_fast_path.h); everything else, and every error, by the streaming
// parser (infer_request_parser.h). Neither builds a JSON tree; both answer exactly as
// ParseInferRequestWithTree (infer_request_tree.cc), the tree parser they replaced,
// which is kept as the tests' reference and the benchmark's baseline.
StatusOr<InferCall> ParseInferRequest(const TaskInfo& task, std::string_view body, Duration max_slo,
                                      std::string_view json_length = {});
StatusOr<InferCall> ParseInferRequestWithTree(const TaskInfo& task, std::string_view body,
                                              Duration max_slo, std::string_view json_length = {});

class KServeHandler {
 public:
  struct Options {
    Duration max_slo = Seconds(60);
    std::string server_version = "0.1.0";
    // When set: one JSON line (json_log.h) per inference request answered, with its
    // request id (serve --log-format json). Called on the io threads.
    std::function<void(const std::string&)> access_log;
    // Shared with the backend's other frontends (gRPC), so /metrics counts every request;
    // used when it lists every task of the handler, else the handler keeps its own.
    std::shared_ptr<RequestMetrics> request_metrics;
    // Model control and the admin token (access_control.h).
    AccessOptions access;
    std::string build_revision = "unknown";  // sloserve_build_info's revision label
  };

  // `backend` (for Ready()) and `metrics` (for /metrics, may be null) must outlive this.
  KServeHandler(Options options, std::vector<TaskInfo> tasks, const InferenceBackend* backend,
                const ServerMetrics* metrics);

  // Either an immediate response or a call to submit to the backend.
  // `inference_header_length`: the request's Inference-Header-Content-Length header;
  // `authorization`: its Authorization header (access_control.h).
  Routed Route(HttpMethod method, std::string_view target, std::string_view body,
               std::string_view inference_header_length = {},
               std::string_view authorization = {}) const;

  // Whether Route looks at the Authorization header (an admin token is set): the
  // transport may skip finding it otherwise.
  bool reads_authorization() const { return !options_.access.admin_token.empty(); }

  // The response to a finished call: 200 with outputs and timing, or the mapped error.
  // Records the call in the request metrics.
  HttpResponse RenderOutcome(const InferCall& call, const InferOutcome& outcome) const;
  // The response to a finished repository call: 200 with the model's state, or the error.
  HttpResponse RenderRepository(const RepositoryCall& call, const Status& status) const;

 private:
  struct TaskEntry {
    TaskInfo info;
    std::string metadata_json;  // GET /v2/models/{task}, rendered once
    std::string config_json;    // GET /v2/models/{task}/config (Triton's), rendered once
    size_t index = 0;           // in the request metrics
  };
  const TaskEntry* FindTask(std::string_view name) const;
  Routed RouteModel(HttpMethod method, std::string_view rest, std::string_view body,
                    std::string_view json_length, std::string_view authorization) const;
  Routed RouteRepository(HttpMethod method, std::string_view rest, std::string_view body,
                         std::string_view authorization) const;
  // The 403/401 for a request to `endpoint`, or nullopt when it may proceed.
  std::optional<HttpResponse> Denied(Endpoint endpoint, std::string_view authorization) const;
  HttpResponse RepositoryIndex() const;
  HttpResponse ModelList() const;
  std::string ModelNotReadyReason(std::string_view model) const;
  HttpResponse RouteStats(HttpMethod method, std::string_view model) const;
  void LogRequest(const InferCall* call, std::string_view model, const InferOutcome* outcome,
                  int http_status, std::string_view error) const;

  Options options_;
  AccessControl access_;
  std::map<std::string, TaskEntry, std::less<>> tasks_;
  std::vector<std::string> model_names_;  // for did-you-mean in unknown-model errors
  // Recorded as a side effect of answering (lock-free), so a const handler may write it.
  std::shared_ptr<RequestMetrics> request_metrics_;
  std::string server_metadata_json_;
  const InferenceBackend* backend_;
  const ServerMetrics* metrics_;
};

}  // namespace sloserve

#include "sloserve/server/kserve_handler.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "sloserve/core/echo_name.h"
#include "sloserve/server/infer_fast_path.h"
#include "sloserve/server/infer_request_checks.h"
#include "sloserve/server/infer_request_parser.h"
#include "sloserve/server/json_limits.h"
#include "sloserve/server/json_log.h"
#include "sloserve/server/json_util.h"
#include "sloserve/server/kserve_http_util.h"
#include "sloserve/server/server_extensions.h"
#include "sloserve/server/tensor_codec.h"
#include "sloserve/server/unknown_model.h"

namespace sloserve {
namespace {

using json = nlohmann::json;
using kserve_http::Error;
using kserve_http::kNotReadyStatus;
using kserve_http::MethodNotAllowed;
using kserve_http::SplitPath;

std::string RenderTaskMetadata(const TaskInfo& task) {
  json inputs = json::array();
  inputs.push_back(
      {{"name", task.input_name}, {"datatype", task.input_datatype}, {"shape", task.input_shape}});
  json outputs = json::array();
  outputs.push_back({{"name", task.output_name},
                     {"datatype", task.output_datatype},
                     {"shape", task.output_shape}});
  // No "versions": the variants are not addressable; sloserve picks one per request and
  // names it in the response's parameters.variant (docs/protocol.md, "Versions").
  json doc = {{"name", task.name},
              {"platform", "sloserve"},
              {"inputs", std::move(inputs)},
              {"outputs", std::move(outputs)},
              {"parameters",
               {{"default_slo_ms", ToMillis(task.default_slo)},
                {"apps", task.apps},
                {"variants", task.variants}}}};
  if (task.max_batch_size > 0) doc["parameters"]["max_batch_size"] = task.max_batch_size;
  return doc.dump();
}

// Triton's model-config type name of a KServe v2 datatype ("FP32" -> "TYPE_FP32").
std::string TritonDataType(const std::string& datatype) {
  return datatype == "BYTES" ? "TYPE_STRING" : "TYPE_" + datatype;
}

// GET /v2/models/{m}/config: Triton's model configuration (model_config.proto as JSON),
// the fields tritonclient's get_model_config and perf_analyzer read. With a batch
// dimension (-1 first) and a row limit, dims leave the batch dimension out and
// max_batch_size states the limit; otherwise max_batch_size is 0 and dims are whole.
std::string RenderTaskConfig(const TaskInfo& task) {
  const bool batched = task.max_batch_size > 0 && !task.input_shape.empty() &&
                       task.input_shape.front() == -1 && !task.output_shape.empty() &&
                       task.output_shape.front() == -1;
  auto tensor = [&](const std::string& name, const std::string& datatype,
                    const std::vector<int64_t>& shape) {
    std::vector<int64_t> dims(shape.begin() + (batched ? 1 : 0), shape.end());
    return json{{"name", name}, {"data_type", TritonDataType(datatype)}, {"dims", dims}};
  };
  json doc = {
      {"name", task.name},
      {"platform", "sloserve"},
      {"backend", "sloserve"},
      {"max_batch_size", batched ? task.max_batch_size : 0},
      {"input", json::array({tensor(task.input_name, task.input_datatype, task.input_shape)})},
      {"output", json::array({tensor(task.output_name, task.output_datatype, task.output_shape)})}};
  return doc.dump();
}

// Appends one output tensor as a KServe v2 output object; as binary tensor data (its
// bytes appended to `binary`) when `as_binary`. False: its data is malformed.
bool AppendOutputTensor(std::string& out, const Tensor& t, bool as_binary, std::string& binary) {
  const StatusOr<int64_t> elements = ElementCount(t.shape, "output");
  if (!elements.ok()) return false;
  out += "{\"name\":";
  AppendJsonString(out, t.name);
  out += ",\"datatype\":";
  AppendJsonString(out, t.datatype);
  out += ",\"shape\":";
  out += ShapeString(t.shape);
  if (as_binary) {
    if (!TensorDataValid(t, *elements)) return false;
    out += ",\"parameters\":{\"binary_data_size\":" + std::to_string(t.data.size()) + "}}";
    binary.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
    return true;
  }
  out += ",\"data\":[";
  if (!AppendTensorDataJson(out, t, *elements)) return false;
  out += "]}";
  return true;
}

// What an executor that computes nothing (the emulated one) answers: one 0 per row.
Tensor PlaceholderOutput(const TaskInfo& task, int32_t rows) {
  Tensor t;
  t.name = task.output_name;
  t.datatype = "FP32";
  t.shape = {rows, 1};
  t.data.assign(static_cast<size_t>(rows) * 4, 0);
  return t;
}

}  // namespace

int HttpStatusFromCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kFailedPrecondition:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

// The common request shape (infer_fast_path.h) when it is valid as it stands; nullopt
// for anything else, including every error, which the streaming parser then reports.
std::optional<InferCall> ParseCommonInferRequest(const TaskInfo& task, std::string_view body,
                                                 Duration max_slo) {
  std::optional<CommonInferRequest> common = ScanCommonInferRequest(body);
  // Near the JSON limits the streaming parser decides (and names the limit).
  const JsonLimits limits;
  if (!common || (common->id && common->id->size() > limits.max_string_bytes) ||
      common->input_name != task.input_name || common->datatype != "FP32" ||
      (!task.input_datatype.empty() && common->datatype != task.input_datatype) ||
      !CheckShape(common->shape, task).ok()) {
    return std::nullopt;
  }
  const StatusOr<int64_t> expected = ElementCount(common->shape, "input shape");
  if (!expected.ok()) return std::nullopt;
  InferCall call;
  call.request.slo = DefaultSlo(task, max_slo);
  if (common->slo_ms) {
    StatusOr<Duration> slo = SloFromMillis(*common->slo_ms, task, max_slo);
    if (!slo.ok()) return std::nullopt;
    call.request.slo = *slo;
  }
  Tensor tensor;
  tensor.data.reserve(static_cast<size_t>(std::min<int64_t>(*expected, body.size())) * 4);
  int64_t count = 0;
  if (!AppendFp32Numbers(common->data, count, tensor.data) || count != *expected ||
      count > limits.max_values - 64) {
    return std::nullopt;
  }
  call.request.task = task.name;
  if (common->id) {
    call.id = std::string(*common->id);
    call.has_id = true;
  }
  call.request.rows = static_cast<int32_t>(common->shape[0]);
  tensor.name = task.input_name;
  tensor.datatype = "FP32";
  tensor.shape = std::move(common->shape);
  call.request.inputs.push_back(std::move(tensor));
  return call;
}

StatusOr<InferCall> ParseInferRequest(const TaskInfo& task, std::string_view body, Duration max_slo,
                                      std::string_view json_length) {
  if (json_length.empty()) {
    if (std::optional<InferCall> call = ParseCommonInferRequest(task, body, max_slo)) {
      return std::move(*call);
    }
  }
  return ParseInferRequestStreaming(task, body, max_slo, json_length);
}

KServeHandler::KServeHandler(Options options, std::vector<TaskInfo> tasks,
                             const InferenceBackend* backend, const ServerMetrics* metrics)
    : options_(std::move(options)), access_(options_.access), backend_(backend), metrics_(metrics) {
  std::vector<std::string> names;
  const std::vector<TaskInfo> infos = tasks;  // for the request metrics, when its own
  for (TaskInfo& task : tasks) {
    std::string metadata = RenderTaskMetadata(task);
    std::string config = RenderTaskConfig(task);
    std::string name = task.name;
    names.push_back(name);
    model_names_.push_back(name);
    tasks_.emplace(std::move(name),
                   TaskEntry{std::move(task), std::move(metadata), std::move(config), 0});
  }
  std::sort(model_names_.begin(), model_names_.end());
  const auto& shared = options_.request_metrics;
  const bool use_shared = shared && std::all_of(names.begin(), names.end(), [&](const auto& n) {
                            return shared->IndexOf(n).has_value();
                          });
  request_metrics_ = use_shared ? shared : std::make_shared<RequestMetrics>(infos);
  for (auto& [name, entry] : tasks_) entry.index = *request_metrics_->IndexOf(name);
  json extensions = json::array();
  for (std::string_view e : kServerExtensions) extensions.push_back(e);
  extensions.push_back(kRestOnlyExtension);
  server_metadata_json_ = json{
      {"name", "sloserve"},
      {"version", options_.server_version},
      {"extensions",
       std::move(extensions)}}.dump();
}

const KServeHandler::TaskEntry* KServeHandler::FindTask(std::string_view name) const {
  const auto it = tasks_.find(name);
  return it == tasks_.end() ? nullptr : &it->second;
}

std::optional<HttpResponse> KServeHandler::Denied(Endpoint endpoint,
                                                  std::string_view authorization) const {
  std::optional<AccessDenial> denial = access_.Check(endpoint, authorization);
  if (!denial) return std::nullopt;
  if (denial->kind == AccessDenial::Kind::kForbidden) return Error(403, denial->message);
  HttpResponse r = Error(401, denial->message);
  // RFC 6750 3: a request without credentials gets the bare challenge, a wrong one the
  // error code.
  r.www_authenticate = authorization.empty() ? "Bearer realm=\"sloserve\""
                                             : "Bearer realm=\"sloserve\", error=\"invalid_token\"";
  return r;
}

Routed KServeHandler::Route(HttpMethod method, std::string_view target, std::string_view body,
                            std::string_view inference_header_length,
                            std::string_view authorization) const {
  target = target.substr(0, target.find('?'));
  if (method == HttpMethod::kHead) method = HttpMethod::kGet;  // the transport drops the body
  // Triton's statistics extension: every model's (a model named "stats" is shadowed).
  if (target == "/v2/models/stats") {
    if (auto denied = Denied(Endpoint::kStatistics, authorization)) return std::move(*denied);
    return RouteStats(method, "");
  }
  if (target == "/v2/models" || target == "/v2/models/") {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET, HEAD");
    return ModelList();
  }
  constexpr std::string_view kModels = "/v2/models/";
  if (target.starts_with(kModels)) {
    return RouteModel(method, target.substr(kModels.size()), body, inference_header_length,
                      authorization);
  }
  if (target == "/v2/health/live") {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET, HEAD");
    return HttpResponse{200, "{\"live\":true}"};
  }
  if (target == "/v2/health/ready") {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET, HEAD");
    if (backend_->Ready()) {
      const std::string note = backend_->ReadyNote();
      if (note.empty()) return HttpResponse{200, "{\"ready\":true}"};
      std::string out = "{\"ready\":true,\"degraded\":";
      AppendJsonString(out, note);
      out += "}";
      return HttpResponse{200, std::move(out)};
    }
    std::string out = "{\"ready\":false,\"reason\":";
    AppendJsonString(out, backend_->NotReadyReason());
    out += "}";
    return HttpResponse{kNotReadyStatus, std::move(out), "application/json", nullptr, "5"};
  }
  if (target == "/v2" || target == "/v2/") {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET, HEAD");
    return HttpResponse{200, server_metadata_json_};
  }
  if (target == "/v2/repository/index") {
    if (method != HttpMethod::kPost) return MethodNotAllowed("POST");
    return RepositoryIndex();
  }
  constexpr std::string_view kRepositoryModels = "/v2/repository/models/";
  if (target.starts_with(kRepositoryModels)) {
    return RouteRepository(method, target.substr(kRepositoryModels.size()), body, authorization);
  }
  if (target == "/metrics") {
    if (auto denied = Denied(Endpoint::kMetrics, authorization)) return std::move(*denied);
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET, HEAD");
    std::string text = RenderProcessMetrics({options_.server_version, options_.build_revision});
    if (metrics_) text += metrics_->RenderPrometheus();
    text += request_metrics_->RenderPrometheus();
    if (backend_) text += backend_->PrometheusMetrics();
    return HttpResponse{200, std::move(text), "text/plain; version=0.0.4"};
  }
  return Error(404, "unknown path '" + EchoName(target) + "'");
}

HttpResponse KServeHandler::RouteStats(HttpMethod method, std::string_view model) const {
  if (method != HttpMethod::kGet) return MethodNotAllowed("GET, HEAD");
  std::string out = "{\"model_stats\":[";
  bool first = true;
  for (const auto& [name, entry] : tasks_) {
    if (!model.empty() && name != model) continue;
    if (!first) out += ',';
    first = false;
    out += request_metrics_->RenderModelStats(entry.index);
  }
  return HttpResponse{200, out + "]}"};
}

Routed KServeHandler::RouteModel(HttpMethod method, std::string_view rest, std::string_view body,
                                 std::string_view json_length,
                                 std::string_view authorization) const {
  std::vector<std::string> parts;
  if (!SplitPath(rest, parts)) {
    return Error(400, "malformed percent-encoding in path '/v2/models/" + EchoName(rest) + "'");
  }
  const TaskEntry* task = FindTask(parts[0]);
  if (task == nullptr) return Error(404, UnknownModelMessage(parts[0], model_names_));
  if (parts.size() >= 2 && parts[1] == "versions") {
    return Error(404, "model '" + task->info.name +
                          "' has no versions: sloserve chooses the variant for each request "
                          "and reports it in the response's parameters.variant; use /v2/models/" +
                          task->info.name + "/...");
  }
  const std::string_view action = parts.size() > 1 ? std::string_view(parts[1]) : "";
  if (parts.size() > 2 || (parts.size() == 2 && action != "ready" && action != "infer" &&
                           action != "stats" && action != "config")) {
    return Error(404, "unknown path '/v2/models/" + EchoName(rest) + "'");
  }
  if (action.empty()) {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET, HEAD");
    return HttpResponse{200, task->metadata_json};
  }
  if (action == "stats") {
    if (auto denied = Denied(Endpoint::kStatistics, authorization)) return std::move(*denied);
    return RouteStats(method, task->info.name);
  }
  if (action == "config") {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET, HEAD");
    return HttpResponse{200, task->config_json};
  }
  if (action == "ready") {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET, HEAD");
    const std::string why = ModelNotReadyReason(task->info.name);
    std::string out = "{\"name\":";
    AppendJsonString(out, task->info.name);
    if (why.empty()) {
      out += ",\"ready\":true}";
      return HttpResponse{200, std::move(out)};
    }
    out += ",\"ready\":false,\"reason\":";
    AppendJsonString(out, why);
    out += "}";
    return HttpResponse{kNotReadyStatus, std::move(out), "application/json", nullptr, "5"};
  }
  // action == "infer"
  if (auto denied = Denied(Endpoint::kInfer, authorization)) return std::move(*denied);
  if (method != HttpMethod::kPost) return MethodNotAllowed("POST");
  const auto received = std::chrono::steady_clock::now();
  StatusOr<InferCall> call = ParseInferRequest(task->info, body, options_.max_slo, json_length);
  if (!call.ok()) {
    request_metrics_->RecordInvalid(task->index);
    const int status = HttpStatusFromCode(call.status().code());
    if (options_.access_log)
      LogRequest(nullptr, task->info.name, nullptr, status, call.status().message());
    return Error(status, call.status().message());
  }
  call->model_index = task->index;
  call->received = received;
  return std::move(call).value();
}

HttpResponse KServeHandler::RenderOutcome(const InferCall& call,
                                          const InferOutcome& outcome) const {
  request_metrics_->RecordOutcome(
      call.model_index, outcome,
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - call.received),
      call.request.rows, call.request.slo);
  if (!outcome.status.ok()) {
    const int status = HttpStatusFromCode(outcome.status.code());
    if (options_.access_log)
      LogRequest(&call, call.request.task, &outcome, status, outcome.status.message());
    return Error(status, outcome.status.message());
  }
  if (options_.access_log) LogRequest(&call, call.request.task, &outcome, 200, "");
  const TaskEntry* task = FindTask(call.request.task);
  const int32_t rows = call.request.rows;
  std::string out;
  out.reserve(320 + static_cast<size_t>(rows) * 4);
  out += "{\"model_name\":";
  AppendJsonString(out, call.request.task);
  if (call.has_id) {
    out += ",\"id\":";
    AppendJsonString(out, call.id);
  }
  // No computed outputs (the emulated executor): a zero output per row, as always.
  TensorSet placeholder;
  if (outcome.outputs.empty() && task != nullptr)
    placeholder.push_back(PlaceholderOutput(task->info, rows));
  const TensorSet& outputs = outcome.outputs.empty() ? placeholder : outcome.outputs;
  // A requested output the executor did not compute is a server error, not an answer
  // silently missing it (e.g. an executor whose output name differs from the declared).
  for (const RequestedOutput& o : call.outputs) {
    if (std::none_of(outputs.begin(), outputs.end(),
                     [&](const Tensor& t) { return t.name == o.name; })) {
      std::string names;
      for (const Tensor& t : outputs) names += (names.empty() ? "'" : ", '") + t.name + "'";
      return Error(500, "the executor returned no output '" + o.name + "' (it returned " +
                            (names.empty() ? "none" : names) + ")");
    }
  }
  std::string binary;
  bool any_binary = false;
  out += ",\"outputs\":[";
  bool first = true;
  for (const Tensor& t : outputs) {
    bool as_binary = call.binary_outputs;
    if (!call.outputs.empty()) {
      const auto req = std::find_if(call.outputs.begin(), call.outputs.end(),
                                    [&](const RequestedOutput& o) { return o.name == t.name; });
      if (req == call.outputs.end()) continue;  // not asked for
      as_binary = as_binary || req->binary;
    }
    if (!first) out += ',';
    first = false;
    any_binary = any_binary || as_binary;
    if (!AppendOutputTensor(out, t, as_binary, binary)) {
      return Error(500, "the executor returned a malformed output tensor '" + t.name +
                            "' (datatype '" + t.datatype + "', " + std::to_string(t.data.size()) +
                            " bytes for shape " + ShapeString(t.shape) + ")");
    }
  }
  out += "]";
  out += ",\"parameters\":{\"variant\":";
  AppendJsonString(out, outcome.variant);
  out += ",\"worker\":";
  AppendJsonString(out, outcome.worker);
  if (!outcome.hardware.empty()) {
    out += ",\"hardware\":";
    AppendJsonString(out, outcome.hardware);
  }
  out += ",\"queue_us\":" + std::to_string(outcome.queue_time.count());
  out += ",\"compute_us\":" + std::to_string(outcome.compute_time.count());
  out += ",\"batch_size\":" + std::to_string(outcome.batch_size);
  out += outcome.met_slo ? ",\"met_slo\":true}" : ",\"met_slo\":false}";
  if (!call.warnings.empty()) {
    out += ",\"warnings\":[";
    for (size_t i = 0; i < call.warnings.size(); ++i) {
      if (i > 0) out += ',';
      AppendJsonString(out, call.warnings[i]);
    }
    out += ']';
  }
  out += '}';
  if (!any_binary) return HttpResponse{200, std::move(out)};
  HttpResponse r{200, std::move(out), "application/octet-stream"};
  r.inference_header_length = r.body.size();
  r.body += binary;
  return r;
}

void KServeHandler::LogRequest(const InferCall* call, std::string_view model,
                               const InferOutcome* outcome, int http_status,
                               std::string_view error) const {
  std::string line;
  line.reserve(320);
  StartJsonLogLine(line, http_status == 200 ? "info" : "warn", "infer");
  line += ",\"request_id\":";
  if (call != nullptr && call->has_id) {
    AppendJsonString(line, call->id);
  } else {
    line += "null";
  }
  line += ",\"model\":";
  AppendJsonString(line, model);
  line += ",\"status\":" + std::to_string(http_status);
  if (call != nullptr) {
    const auto latency = std::chrono::steady_clock::now() - call->received;
    line += ",\"latency_us\":" +
            std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(latency).count());
    line += ",\"rows\":" + std::to_string(call->request.rows);
  }
  if (outcome != nullptr && outcome->status.ok()) {
    line += ",\"variant\":";
    AppendJsonString(line, outcome->variant);
    line += ",\"worker\":";
    AppendJsonString(line, outcome->worker);
    line += ",\"queue_us\":" + std::to_string(outcome->queue_time.count());
    line += ",\"compute_us\":" + std::to_string(outcome->compute_time.count());
    if (outcome->exec_time >= Duration(0))
      line += ",\"exec_us\":" + std::to_string(outcome->exec_time.count());
    line += ",\"batch_size\":" + std::to_string(outcome->batch_size);
    line += outcome->met_slo ? ",\"met_slo\":true" : ",\"met_slo\":false";
  }
  if (outcome != nullptr && outcome->reason != nullptr) {
    line += ",\"reason\":";
    AppendJsonString(line, outcome->reason);
  }
  if (!error.empty()) {
    line += ",\"error\":";
    AppendJsonString(line, error);
  }
  line += '}';
  options_.access_log(line);
}

}  // namespace sloserve

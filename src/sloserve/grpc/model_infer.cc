#include "sloserve/grpc/model_infer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "sloserve/core/declared_key.h"
#include "sloserve/core/echo_name.h"
#include "sloserve/grpc/tensor_contents.h"
#include "sloserve/server/unknown_parameters.h"

namespace sloserve::grpc_protocol {
namespace {

std::string ShapeText(const google::protobuf::RepeatedField<int64_t>& shape) {
  std::string s = "[";
  for (int i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape.Get(i));
  return s + "]";
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// slo_ms may come as int64, double or a numeric string (clients differ in what they send).
StatusOr<double> NumberParameter(const inference::InferParameter& p, const char* name) {
  switch (p.parameter_choice_case()) {
    case inference::InferParameter::kInt64Param:
      return static_cast<double>(p.int64_param());
    case inference::InferParameter::kDoubleParam:
      return p.double_param();
    case inference::InferParameter::kStringParam:
      if (const std::optional<double> v = ParseNumber(p.string_param())) return *v;
      break;
    default:
      break;
  }
  return InvalidArgumentError(std::string("parameter '") + name + "' must be a number");
}

// Request parameters sloserve does not read: reported, not refused (as over HTTP).
std::vector<std::string> UnknownParameterWarnings(const inference::ModelInferRequest& req) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : req.parameters()) {
    if (!IsKnownRequestParameter(key)) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());  // protobuf maps have no order of their own
  if (keys.size() > kMaxParameterWarnings) keys.resize(kMaxParameterWarnings);
  std::vector<std::string> warnings;
  warnings.reserve(keys.size());
  for (const std::string& k : keys) warnings.push_back(UnknownParameterWarning(k));
  return warnings;
}

Status ParseParameters(const TaskInfo& task, const inference::ModelInferRequest& req,
                       Duration max_slo, InferRequest& out) {
  out.slo = task.default_slo > Duration::zero() ? task.default_slo : max_slo;
  const auto& params = req.parameters();
  if (auto it = params.find("slo_ms"); it != params.end()) {
    ASSIGN_OR_RETURN(double ms, NumberParameter(it->second, "slo_ms"));
    const double max_ms = ToMillis(max_slo);
    if (!std::isfinite(ms) || ms <= 0 || ms > max_ms) {
      return InvalidArgumentError("parameter 'slo_ms' must be in (0, " +
                                  std::to_string(static_cast<int64_t>(max_ms)) + "]");
    }
    out.slo = std::max(MillisF(ms), Micros(1));
    RETURN_IF_ERROR(CheckSloAchievable(out.slo, task));
  }
  if (auto it = params.find("app"); it != params.end()) {
    if (it->second.parameter_choice_case() != inference::InferParameter::kStringParam)
      return InvalidArgumentError("parameter 'app' must be a string");
    out.app = it->second.string_param();
    if (!out.app.empty() && !task.apps.empty() &&
        std::find(task.apps.begin(), task.apps.end(), out.app) == task.apps.end()) {
      return InvalidArgumentError("unknown app '" + EchoName(out.app) + "' for model '" +
                                  task.name + "'");
    }
  }
  if (auto it = params.find("priority"); it != params.end()) {
    if (it->second.parameter_choice_case() != inference::InferParameter::kInt64Param)
      return InvalidArgumentError("parameter 'priority' must be an integer (int64_param)");
    const int64_t p = it->second.int64_param();
    RETURN_IF_ERROR(CheckPriority(p, task));
    out.priority = static_cast<int32_t>(p);
  }
  return OkStatus();
}

StatusOr<std::vector<int64_t>> CheckShape(const TaskInfo& task,
                                          const google::protobuf::RepeatedField<int64_t>& shape) {
  std::vector<int64_t> s(shape.begin(), shape.end());
  if (s.empty()) return InvalidArgumentError("input 'shape' must have a batch dimension");
  for (int64_t d : s) {
    if (d < 0) return InvalidArgumentError("input 'shape' must hold non-negative integers");
  }
  const auto& declared = task.input_shape;
  if (!declared.empty()) {
    bool ok = declared.size() == s.size();
    for (size_t i = 0; ok && i < s.size(); ++i) ok = declared[i] < 0 || declared[i] == s[i];
    if (!ok) {
      return InvalidArgumentError("input shape " + ShapeText(shape) +
                                  " does not match the declared shape " + ShapeText(declared) +
                                  " of model '" + task.name + "' (-1 = any)");
    }
  }
  if (s[0] < 1 || s[0] > std::numeric_limits<int32_t>::max()) {
    return InvalidArgumentError("the batch dimension shape[0] must be in [1, 2^31)");
  }
  return s;
}

}  // namespace

StatusOr<ModelInferCall> ParseModelInfer(const TaskInfo& task,
                                         const inference::ModelInferRequest& req,
                                         Duration max_slo) {
  if (!req.model_version().empty()) return NoVersionsError(task, req.model_version());
  ModelInferCall call;
  call.id = req.id();
  call.request.task = task.name;
  if (req.inputs_size() != 1) {
    return InvalidArgumentError("expected exactly one input ('" + task.input_name + "'), got " +
                                std::to_string(req.inputs_size()));
  }
  const auto& in = req.inputs(0);
  if (in.name() != task.input_name) {
    return InvalidArgumentError("unknown input '" + EchoName(in.name()) + "' for model '" +
                                task.name + "' (expects '" + task.input_name + "')");
  }
  if (!task.input_datatype.empty() && in.datatype() != task.input_datatype) {
    return InvalidArgumentError("input datatype '" + EchoName(in.datatype()) +
                                "' does not match the declared '" + task.input_datatype + "'");
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, CheckShape(task, in.shape()));
  const int64_t elements = ElementCount(shape);
  if (elements < 0) return InvalidArgumentError("input shape has too many elements");
  for (const auto& out : req.outputs()) {
    if (out.name() != task.output_name) {
      return InvalidArgumentError("unknown output '" + EchoName(out.name()) + "' for model '" +
                                  task.name + "' (it has '" + task.output_name + "')");
    }
  }
  Tensor tensor;
  if (req.raw_input_contents_size() > 0) {
    if (req.raw_input_contents_size() != 1) {
      return InvalidArgumentError("raw_input_contents has " +
                                  std::to_string(req.raw_input_contents_size()) +
                                  " entries for 1 input");
    }
    if (in.has_contents()) {
      return InvalidArgumentError("input '" + EchoName(in.name()) +
                                  "' has both contents and raw_input_contents");
    }
    ASSIGN_OR_RETURN(tensor.data,
                     BytesFromRaw(req.raw_input_contents(0), in.datatype(), elements, in.name()));
    call.raw_output = true;
  } else {
    ASSIGN_OR_RETURN(tensor.data,
                     BytesFromContents(in.contents(), in.datatype(), elements, in.name()));
  }
  RETURN_IF_ERROR(ParseParameters(task, req, max_slo, call.request));
  call.warnings = UnknownParameterWarnings(req);
  call.request.rows = static_cast<int32_t>(shape[0]);
  tensor.name = in.name();
  tensor.datatype = in.datatype();
  tensor.shape = std::move(shape);
  call.request.inputs.push_back(std::move(tensor));
  return call;
}

Status RenderModelInfer(const TaskInfo& task, const ModelInferCall& call,
                        const InferOutcome& outcome, inference::ModelInferResponse* resp) {
  // No model_version: versions are not exposed (the variant is parameters["variant"]).
  resp->set_model_name(task.name);
  resp->set_id(call.id);
  auto& params = *resp->mutable_parameters();
  params["variant"].set_string_param(outcome.variant);
  params["worker"].set_string_param(outcome.worker);
  if (!outcome.hardware.empty()) params["hardware"].set_string_param(outcome.hardware);
  params["queue_us"].set_int64_param(outcome.queue_time.count());
  params["compute_us"].set_int64_param(outcome.compute_time.count());
  params["batch_size"].set_int64_param(outcome.batch_size);
  params["met_slo"].set_bool_param(outcome.met_slo);
  if (!call.warnings.empty()) {
    std::string joined;
    for (const std::string& w : call.warnings) joined += (joined.empty() ? "" : "; ") + w;
    params["warnings"].set_string_param(std::move(joined));
  }
  TensorSet placeholder;
  const TensorSet* outputs = &outcome.outputs;
  if (outputs->empty()) {
    // Emulated models compute nothing: one 0.0 per row, as over HTTP.
    Tensor t;
    t.name = task.output_name;
    t.datatype = "FP32";
    t.shape = {call.request.rows, 1};
    t.data.assign(static_cast<size_t>(call.request.rows) * 4, 0);
    placeholder.push_back(std::move(t));
    outputs = &placeholder;
  }
  for (const Tensor& t : *outputs) {
    auto* o = resp->add_outputs();
    o->set_name(t.name);
    o->set_datatype(t.datatype);
    for (int64_t d : t.shape) o->add_shape(d);
    if (call.raw_output) {
      resp->add_raw_output_contents(reinterpret_cast<const char*>(t.data.data()), t.data.size());
    } else if (!ContentsFromBytes(t, o->mutable_contents())) {
      return InternalError("output '" + t.name + "' of the executor is not whole " + t.datatype +
                           " elements");
    }
  }
  return OkStatus();
}

void RenderModelMetadata(const TaskInfo& task, inference::ModelMetadataResponse* resp) {
  resp->set_name(task.name);  // no versions, as over HTTP (docs/protocol.md "Versions")
  resp->set_platform("sloserve");
  auto* in = resp->add_inputs();
  in->set_name(task.input_name);
  in->set_datatype(task.input_datatype);
  for (int64_t d : task.input_shape) in->add_shape(d);
  auto* out = resp->add_outputs();
  out->set_name(task.output_name);
  out->set_datatype(task.output_datatype);
  for (int64_t d : task.output_shape) out->add_shape(d);
}

Status NoVersionsError(const TaskInfo& task, const std::string& version) {
  return NotFoundError("model '" + task.name + "' has no versions (asked for '" +
                       EchoName(version) +
                       "'): sloserve chooses the variant for each request and reports it in "
                       "the response's parameters[\"variant\"]; leave the version empty");
}

::grpc::StatusCode GrpcCodeOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return ::grpc::StatusCode::OK;
    case StatusCode::kInvalidArgument:
      return ::grpc::StatusCode::INVALID_ARGUMENT;
    case StatusCode::kOutOfRange:
      return ::grpc::StatusCode::OUT_OF_RANGE;
    case StatusCode::kFailedPrecondition:
      return ::grpc::StatusCode::FAILED_PRECONDITION;
    case StatusCode::kNotFound:
      return ::grpc::StatusCode::NOT_FOUND;
    case StatusCode::kResourceExhausted:
      return ::grpc::StatusCode::RESOURCE_EXHAUSTED;
    case StatusCode::kUnavailable:
      return ::grpc::StatusCode::UNAVAILABLE;
    case StatusCode::kDeadlineExceeded:
      return ::grpc::StatusCode::DEADLINE_EXCEEDED;
    case StatusCode::kUnimplemented:
      return ::grpc::StatusCode::UNIMPLEMENTED;
    case StatusCode::kInternal:
      return ::grpc::StatusCode::INTERNAL;
  }
  return ::grpc::StatusCode::INTERNAL;
}

}  // namespace sloserve::grpc_protocol

// The inference request parsed into an nlohmann::json tree, then validated: the parser
// every request went through before the streaming one (infer_request_parser.h), kept as
// the reference its tests compare against and as the benchmark's baseline. The server
// does not call it.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sloserve/core/echo_name.h"
#include "sloserve/server/infer_request_checks.h"
#include "sloserve/server/kserve_handler.h"
#include "sloserve/server/tensor_codec.h"
#include "sloserve/server/unknown_parameters.h"

namespace sloserve {
namespace {

using json = nlohmann::json;

StatusOr<std::vector<int64_t>> ParseShape(const json& j, const TaskInfo& task) {
  if (!j.is_array()) return InvalidArgumentError("input 'shape' must be an array of integers");
  std::vector<int64_t> shape;
  shape.reserve(j.size());
  for (const json& d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) {
      return InvalidArgumentError("input 'shape' must hold integers from 0 to 2^63-1");
    }
    shape.push_back(d.get<int64_t>());
  }
  RETURN_IF_ERROR(CheckShape(shape, task));
  return shape;
}

Status ParseParameters(const json& doc, const TaskInfo& task, Duration max_slo, InferRequest& req) {
  req.slo = DefaultSlo(task, max_slo);
  const auto params = doc.find("parameters");
  if (params == doc.end()) return OkStatus();
  if (!params->is_object()) return InvalidArgumentError("'parameters' must be an object");
  if (const auto slo = params->find("slo_ms"); slo != params->end()) {
    if (!slo->is_number()) return InvalidArgumentError("parameter 'slo_ms' must be a number");
    ASSIGN_OR_RETURN(req.slo, SloFromMillis(slo->get<double>(), task, max_slo));
  }
  if (const auto app = params->find("app"); app != params->end()) {
    if (!app->is_string()) return InvalidArgumentError("parameter 'app' must be a string");
    req.app = app->get<std::string>();
    if (!req.app.empty() && !task.apps.empty() &&
        std::find(task.apps.begin(), task.apps.end(), req.app) == task.apps.end()) {
      return InvalidArgumentError("unknown app '" + EchoName(req.app) + "' for model '" +
                                  task.name + "'");
    }
  }
  if (const auto priority = params->find("priority"); priority != params->end()) {
    if (!priority->is_number_integer())
      return InvalidArgumentError("parameter 'priority' must be an integer");
    const int64_t p =
        priority->is_number_unsigned()
            ? static_cast<int64_t>(std::min<uint64_t>(priority->get<uint64_t>(), INT64_MAX))
            : priority->get<int64_t>();
    RETURN_IF_ERROR(CheckPriority(p, task));
    req.priority = static_cast<int32_t>(p);
  }
  return OkStatus();
}

// A boolean parameter of `obj` ("parameters" member), false when absent.
StatusOr<bool> BoolParameter(const json& obj, const char* key, const char* owner = "") {
  const auto params = obj.find("parameters");
  if (params == obj.end()) return false;
  if (!params->is_object()) {
    return InvalidArgumentError(std::string(owner) + "'parameters' must be an object");
  }
  const auto v = params->find(key);
  if (v == params->end()) return false;
  if (!v->is_boolean())
    return InvalidArgumentError(std::string("parameter '") + key + "' must be a boolean");
  return v->get<bool>();
}

// The request's "outputs": each names the declared output at most once.
Status ParseOutputs(const json& doc, const TaskInfo& task, InferCall& call) {
  ASSIGN_OR_RETURN(call.binary_outputs, BoolParameter(doc, "binary_data_output"));
  const auto outputs = doc.find("outputs");
  if (outputs == doc.end()) return OkStatus();
  if (!outputs->is_array()) return InvalidArgumentError("'outputs' must be an array");
  for (const json& out : *outputs) {
    const auto name = out.is_object() ? out.find("name") : out.end();
    if (!out.is_object() || name == out.end() || !name->is_string()) {
      return InvalidArgumentError("each requested output must be an object with a string 'name'");
    }
    const auto& n = name->get_ref<const std::string&>();
    if (n != task.output_name) {
      return InvalidArgumentError("unknown output '" + EchoName(n) + "' for model '" + task.name +
                                  "' (has '" + task.output_name + "')");
    }
    for (const RequestedOutput& seen : call.outputs) {
      if (seen.name == n) return InvalidArgumentError("output '" + n + "' requested twice");
    }
    ASSIGN_OR_RETURN(bool binary, BoolParameter(out, "binary_data", "output "));
    call.outputs.push_back({n, binary});
  }
  return OkStatus();
}

// Converts the input's elements: JSON `data`, or `binary_data_size` bytes of `binary`.
Status ParseInputData(const json& input, const std::string& dt, int64_t expected,
                      const std::vector<int64_t>& shape, std::string_view& binary,
                      size_t body_bytes, std::vector<uint8_t>& out) {
  const json* size = nullptr;  // parameters.binary_data_size
  if (const auto params = input.find("parameters"); params != input.end()) {
    if (!params->is_object()) return InvalidArgumentError("input 'parameters' must be an object");
    if (const auto it = params->find("binary_data_size"); it != params->end()) size = &*it;
  }
  const auto data = input.find("data");
  if (size != nullptr) {
    if (!size->is_number_unsigned()) {
      return InvalidArgumentError(
          "input parameter 'binary_data_size' must be an integer from 0 to 2^64-1");
    }
    if (data != input.end()) {
      return InvalidArgumentError("input has both 'data' and parameter 'binary_data_size'");
    }
    return TakeBinaryTensorData(binary, size->get<uint64_t>(), dt, expected, out);
  }
  if (data == input.end() || !data->is_array()) {
    return InvalidArgumentError(
        "input 'data' must be an array (or binary data: parameter 'binary_data_size')");
  }
  // Reserved for the declared size, capped by what the body can hold (a scalar takes at
  // least one byte of JSON), so a huge declared shape with little data allocates nothing.
  out.reserve(static_cast<size_t>(std::min<int64_t>(expected, body_bytes)) * DatatypeSize(dt));
  int64_t count = 0;
  RETURN_IF_ERROR(JsonToTensorData(*data, dt, count, out));
  if (count != expected) {
    return InvalidArgumentError("input 'data' has " + std::to_string(count) +
                                " elements but shape " + ShapeString(shape) + " needs " +
                                std::to_string(expected));
  }
  return OkStatus();
}

StatusOr<InferCall> ParseInferDocument(const TaskInfo& task, const json& doc, Duration max_slo,
                                       std::string_view binary, size_t body_bytes) {
  if (!doc.is_object()) return InvalidArgumentError("request body must be a JSON object");
  InferCall call;
  call.request.task = task.name;
  if (const auto id = doc.find("id"); id != doc.end()) {
    if (!id->is_string()) return InvalidArgumentError("'id' must be a string");
    call.id = id->get<std::string>();
    call.has_id = true;
  }
  const auto inputs = doc.find("inputs");
  if (inputs == doc.end() || !inputs->is_array() || inputs->empty()) {
    return InvalidArgumentError("'inputs' must be a non-empty array");
  }
  const json* input = nullptr;
  for (const json& in : *inputs) {
    const auto name = in.is_object() ? in.find("name") : in.end();
    if (!in.is_object() || name == in.end() || !name->is_string()) {
      return InvalidArgumentError("each input must be an object with a string 'name'");
    }
    if (name->get_ref<const std::string&>() != task.input_name) {
      return InvalidArgumentError("unknown input '" +
                                  EchoName(name->get_ref<const std::string&>()) + "' for model '" +
                                  task.name + "' (expects '" + task.input_name + "')");
    }
    if (input != nullptr) return InvalidArgumentError("input '" + task.input_name + "' repeated");
    input = &in;
  }
  const auto datatype = input->find("datatype");
  if (datatype == input->end() || !datatype->is_string()) {
    return InvalidArgumentError("input 'datatype' must be a string");
  }
  const auto& dt = datatype->get_ref<const std::string&>();
  if (!task.input_datatype.empty() && dt != task.input_datatype) {
    return InvalidArgumentError("input datatype '" + EchoName(dt) +
                                "' does not match the declared '" + task.input_datatype + "'");
  }
  const auto shape_it = input->find("shape");
  if (shape_it == input->end()) return InvalidArgumentError("input 'shape' is missing");
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ParseShape(*shape_it, task));
  ASSIGN_OR_RETURN(const int64_t expected, ElementCount(shape, "input shape"));
  Tensor tensor;
  RETURN_IF_ERROR(ParseInputData(*input, dt, expected, shape, binary, body_bytes, tensor.data));
  if (!binary.empty()) {
    return InvalidArgumentError(std::to_string(binary.size()) +
                                " bytes of binary data are not claimed by any input's "
                                "'binary_data_size'");
  }
  call.request.rows = static_cast<int32_t>(shape[0]);
  RETURN_IF_ERROR(ParseParameters(doc, task, max_slo, call.request));
  if (const auto params = doc.find("parameters"); params != doc.end() && params->is_object()) {
    for (const auto& [key, value] : params->items()) {
      if (IsKnownRequestParameter(key) || call.warnings.size() >= kMaxParameterWarnings) continue;
      call.warnings.push_back(UnknownParameterWarning(key));
    }
  }
  RETURN_IF_ERROR(ParseOutputs(doc, task, call));
  tensor.name = task.input_name;
  tensor.datatype = dt;
  tensor.shape = std::move(shape);
  call.request.inputs.push_back(std::move(tensor));
  return call;
}

}  // namespace

StatusOr<InferCall> ParseInferRequestWithTree(const TaskInfo& task, std::string_view body,
                                              Duration max_slo, std::string_view json_length) {
  ASSIGN_OR_RETURN(const InferBodyParts parts, SplitInferBody(body, json_length));
  try {
    const json doc = json::parse(parts.json, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return MalformedJson(parts);
    return ParseInferDocument(task, doc, max_slo, parts.binary, body.size());
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("invalid request body: ") + e.what());
  }
}
}  // namespace sloserve

#include "sloserve/server/kserve_handler.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>

#include "sloserve/server/json_util.h"

namespace sloserve {
namespace {

using json = nlohmann::json;

constexpr int kMaxDataDepth = 32;
constexpr int64_t kMaxElements = int64_t{1} << 40;

HttpResponse Error(int status, std::string_view message) {
  HttpResponse r{status, ErrorJson(message)};
  // Overload (429) and not ready or stopping (503) pass: tell clients when to come back.
  if (status == 429 || status == 503) r.retry_after = "1";
  return r;
}

HttpResponse MethodNotAllowed(const char* allow) {
  HttpResponse r = Error(405, std::string("method not allowed; use ") + allow);
  r.allow = allow;
  return r;
}

std::vector<std::string_view> SplitPath(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('/', start);
    if (end == std::string_view::npos) end = s.size();
    parts.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// How a datatype's JSON elements are checked and stored (Tensor::data layout: see
// core/payload_store.h). The checks are exactly the frontend's validation rules: BOOL
// needs booleans, BYTES strings, INT*/UINT* integers, FP*/BF16 numbers, anything else a
// non-null scalar (stored as no bytes: there is no KServe v2 layout for it).
enum class ElemKind : uint8_t { kBool, kBytes, kInt, kFp16, kBf16, kFp32, kFp64, kNumber, kOther };
struct ElemType {
  ElemKind kind = ElemKind::kOther;
  uint8_t size = 0;  // bytes per element; 0 = none stored (BYTES: variable)
};

ElemType ElemTypeOf(std::string_view dt) {
  const auto size = static_cast<uint8_t>(DatatypeSize(dt));
  if (dt == "BOOL") return {ElemKind::kBool, 1};
  if (dt == "BYTES") return {ElemKind::kBytes, 0};
  if (dt.starts_with("INT") || dt.starts_with("UINT")) return {ElemKind::kInt, size};
  if (dt == "FP16") return {ElemKind::kFp16, 2};
  if (dt == "BF16") return {ElemKind::kBf16, 2};
  if (dt == "FP32") return {ElemKind::kFp32, 4};
  if (dt == "FP64") return {ElemKind::kFp64, 8};
  if (dt.starts_with("FP")) return {ElemKind::kNumber, 0};
  return {ElemKind::kOther, 0};
}

// Appends the low `n` bytes of `bits`, little-endian.
inline void AppendLE(std::vector<uint8_t>& out, uint64_t bits, size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    const size_t at = out.size();
    out.resize(at + n);
    std::memcpy(out.data() + at, &bits, n);
  } else {
    for (size_t i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(bits >> (8 * i)));
  }
}

inline uint64_t ReadLE(const uint8_t* p, size_t n) {
  uint64_t bits = 0;
  for (size_t i = 0; i < n; ++i) bits |= static_cast<uint64_t>(p[i]) << (8 * i);
  return bits;
}

// IEEE 754 binary16 from binary32, rounding to nearest even.
uint16_t FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t mant = x & 0x7fffff;
  const int32_t e = static_cast<int32_t>((x >> 23) & 0xff);
  if (e == 0xff) return sign | 0x7c00 | (mant != 0 ? 0x200 : 0);  // inf, NaN
  const int32_t exp = e - 127 + 15;
  if (exp >= 0x1f) return sign | 0x7c00;  // overflow: inf
  uint32_t half;
  uint32_t rem, mid;
  if (exp <= 0) {  // subnormal or zero
    if (exp < -10) return sign;
    mant |= 0x800000;
    const int shift = 14 - exp;
    half = mant >> shift;
    rem = mant & ((1u << shift) - 1);
    mid = 1u << (shift - 1);
  } else {
    half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
    rem = mant & 0x1fff;
    mid = 0x1000;
  }
  if (rem > mid || (rem == mid && (half & 1) != 0)) ++half;  // a carry rounds up to inf
  return static_cast<uint16_t>(sign | half);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    const float f = std::ldexp(static_cast<float>(mant), -24);
    return sign != 0 ? -f : f;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

// bfloat16 from binary32, rounding to nearest even.
uint16_t FloatToBf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // NaN
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

// Checks one scalar against the datatype and appends its bytes; false: wrong type.
inline bool AppendElement(const json& v, ElemType t, std::vector<uint8_t>& out) {
  switch (t.kind) {
    case ElemKind::kBool:
      if (!v.is_boolean()) return false;
      out.push_back(v.get<bool>() ? 1 : 0);
      return true;
    case ElemKind::kBytes: {
      if (!v.is_string()) return false;
      const auto& str = v.get_ref<const std::string&>();
      AppendLE(out, static_cast<uint32_t>(str.size()), 4);
      out.insert(out.end(), str.begin(), str.end());
      return true;
    }
    case ElemKind::kInt: {
      if (!v.is_number_integer()) return false;
      // Out-of-range values wrap to the element's width (two's complement).
      const uint64_t bits =
          v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(v.get<int64_t>());
      AppendLE(out, bits, t.size);
      return true;
    }
    case ElemKind::kFp16:
      if (!v.is_number()) return false;
      AppendLE(out, FloatToHalf(static_cast<float>(v.get<double>())), 2);
      return true;
    case ElemKind::kBf16:
      if (!v.is_number()) return false;
      AppendLE(out, FloatToBf16(static_cast<float>(v.get<double>())), 2);
      return true;
    case ElemKind::kFp32:
      if (!v.is_number()) return false;
      AppendLE(out, std::bit_cast<uint32_t>(static_cast<float>(v.get<double>())), 4);
      return true;
    case ElemKind::kFp64:
      if (!v.is_number()) return false;
      AppendLE(out, std::bit_cast<uint64_t>(v.get<double>()), 8);
      return true;
    case ElemKind::kNumber:
      return v.is_number();
    case ElemKind::kOther:
      return v.is_primitive() && !v.is_null();
  }
  return false;
}

// Walks a (possibly nested) data array once: counts its scalars, checks their type and
// appends their bytes to `out` in row-major order.
Status ConvertElements(const json& data, std::string_view datatype, ElemType type, int depth,
                       int64_t& count, std::vector<uint8_t>& out) {
  if (depth > kMaxDataDepth) return InvalidArgumentError("'data' is nested too deeply");
  for (const json& v : data) {
    if (v.is_array()) {
      RETURN_IF_ERROR(ConvertElements(v, datatype, type, depth + 1, count, out));
    } else if (!AppendElement(v, type, out)) {
      return InvalidArgumentError("'data' holds an element that is not of datatype " +
                                  std::string(datatype));
    } else {
      ++count;
    }
  }
  return OkStatus();
}

// Appends a number as JSON: the shortest text that reads back as the same value; NaN and
// infinities (which JSON cannot hold) as null.
template <typename T>
void AppendNumber(std::string& out, T value) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) {
      out += "null";
      return;
    }
  }
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, res.ptr);
}

// Appends `t.data` as the elements of a JSON array (without the brackets); false when the
// bytes do not hold `elements` elements of the datatype.
bool AppendTensorData(std::string& out, const Tensor& t, int64_t elements) {
  const ElemType type = ElemTypeOf(t.datatype);
  const uint8_t* p = t.data.data();
  const size_t n = t.data.size();
  if (type.kind == ElemKind::kBytes) {
    size_t at = 0;
    for (int64_t i = 0; i < elements; ++i) {
      if (n - at < 4) return false;
      const size_t len = ReadLE(p + at, 4);
      at += 4;
      if (n - at < len) return false;
      if (i > 0) out += ',';
      AppendJsonString(out, std::string_view(reinterpret_cast<const char*>(p + at), len));
      at += len;
    }
    return at == n;
  }
  if (type.size == 0 || n != static_cast<size_t>(elements) * type.size) return false;
  const bool is_signed = t.datatype.starts_with("INT");
  out.reserve(out.size() + n * 3);
  for (int64_t i = 0; i < elements; ++i) {
    if (i > 0) out += ',';
    const uint64_t bits = ReadLE(p + i * type.size, type.size);
    switch (type.kind) {
      case ElemKind::kBool:
        out += bits != 0 ? "true" : "false";
        break;
      case ElemKind::kInt:
        if (is_signed) {
          const unsigned shift = 64 - 8 * type.size;  // sign-extend
          AppendNumber(out, static_cast<int64_t>(bits << shift) >> shift);
        } else {
          AppendNumber(out, bits);
        }
        break;
      case ElemKind::kFp16:
        AppendNumber(out, HalfToFloat(static_cast<uint16_t>(bits)));
        break;
      case ElemKind::kBf16:
        AppendNumber(out, std::bit_cast<float>(static_cast<uint32_t>(bits) << 16));
        break;
      case ElemKind::kFp32:
        AppendNumber(out, std::bit_cast<float>(static_cast<uint32_t>(bits)));
        break;
      case ElemKind::kFp64:
        AppendNumber(out, std::bit_cast<double>(bits));
        break;
      default:
        return false;
    }
  }
  return true;
}

// Appends one output tensor as a KServe v2 output object; false: its data is malformed.
bool AppendOutputTensor(std::string& out, const Tensor& t) {
  int64_t elements = 1;
  for (int64_t d : t.shape) {
    if (d < 0 || (d != 0 && elements > kMaxElements / d)) return false;
    elements *= d;
  }
  out += "{\"name\":";
  AppendJsonString(out, t.name);
  out += ",\"datatype\":";
  AppendJsonString(out, t.datatype);
  out += ",\"shape\":[";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i > 0) out += ',';
    AppendNumber(out, t.shape[i]);
  }
  out += "],\"data\":[";
  if (!AppendTensorData(out, t, elements)) return false;
  out += "]}";
  return true;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

StatusOr<std::vector<int64_t>> ParseShape(const json& j, const TaskInfo& task) {
  if (!j.is_array()) return InvalidArgumentError("input 'shape' must be an array of integers");
  std::vector<int64_t> shape;
  shape.reserve(j.size());
  for (const json& d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) {
      return InvalidArgumentError("input 'shape' must hold non-negative integers");
    }
    shape.push_back(d.get<int64_t>());
  }
  if (shape.empty()) return InvalidArgumentError("input 'shape' must have a batch dimension");
  const auto& declared = task.input_shape;
  if (!declared.empty()) {
    bool ok = declared.size() == shape.size();
    for (size_t i = 0; ok && i < shape.size(); ++i) {
      ok = declared[i] < 0 || declared[i] == shape[i];
    }
    if (!ok) {
      return InvalidArgumentError("input shape " + ShapeString(shape) +
                                  " does not match the declared shape " + ShapeString(declared) +
                                  " of model '" + task.name + "' (-1 = any)");
    }
  }
  if (shape[0] < 1 || shape[0] > std::numeric_limits<int32_t>::max()) {
    return InvalidArgumentError("the batch dimension shape[0] must be in [1, 2^31)");
  }
  return shape;
}

Status ParseParameters(const json& doc, const TaskInfo& task, Duration max_slo, InferRequest& req) {
  req.slo = task.default_slo > Duration::zero() ? task.default_slo : max_slo;
  const auto params = doc.find("parameters");
  if (params == doc.end()) return OkStatus();
  if (!params->is_object()) return InvalidArgumentError("'parameters' must be an object");
  if (const auto slo = params->find("slo_ms"); slo != params->end()) {
    if (!slo->is_number()) return InvalidArgumentError("parameter 'slo_ms' must be a number");
    const double ms = slo->get<double>();
    const double max_ms = ToMillis(max_slo);
    if (!std::isfinite(ms) || ms <= 0 || ms > max_ms) {
      return InvalidArgumentError("parameter 'slo_ms' must be in (0, " +
                                  std::to_string(static_cast<int64_t>(max_ms)) + "]");
    }
    req.slo = std::max(MillisF(ms), Micros(1));
  }
  if (const auto app = params->find("app"); app != params->end()) {
    if (!app->is_string()) return InvalidArgumentError("parameter 'app' must be a string");
    req.app = app->get<std::string>();
    if (!req.app.empty() && !task.apps.empty() &&
        std::find(task.apps.begin(), task.apps.end(), req.app) == task.apps.end()) {
      return InvalidArgumentError("unknown app '" + req.app + "' for model '" + task.name + "'");
    }
  }
  return OkStatus();
}

StatusOr<InferCall> ParseInferDocument(const TaskInfo& task, const json& doc, Duration max_slo,
                                       size_t body_bytes) {
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
      return InvalidArgumentError("unknown input '" + name->get<std::string>() + "' for model '" +
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
    return InvalidArgumentError("input datatype '" + dt + "' does not match the declared '" +
                                task.input_datatype + "'");
  }
  const auto shape_it = input->find("shape");
  if (shape_it == input->end()) return InvalidArgumentError("input 'shape' is missing");
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ParseShape(*shape_it, task));
  int64_t expected = 1;
  for (int64_t d : shape) {
    if (d != 0 && expected > kMaxElements / d) {
      return InvalidArgumentError("input shape has too many elements");
    }
    expected *= d;
  }
  const auto data = input->find("data");
  if (data == input->end() || !data->is_array()) {
    return InvalidArgumentError("input 'data' must be an array (binary data is not supported)");
  }
  // Validation and conversion in one walk over the elements. Reserved for the declared
  // size, capped by what the body can hold (a scalar takes at least one byte of JSON), so
  // a huge declared shape with little data allocates nothing large.
  const ElemType type = ElemTypeOf(dt);
  Tensor tensor;
  tensor.data.reserve(static_cast<size_t>(std::min<int64_t>(expected, body_bytes)) * type.size);
  int64_t count = 0;
  RETURN_IF_ERROR(ConvertElements(*data, dt, type, 1, count, tensor.data));
  if (count != expected) {
    return InvalidArgumentError("input 'data' has " + std::to_string(count) +
                                " elements but shape " + ShapeString(shape) + " needs " +
                                std::to_string(expected));
  }
  call.request.rows = static_cast<int32_t>(shape[0]);
  RETURN_IF_ERROR(ParseParameters(doc, task, max_slo, call.request));
  tensor.name = task.input_name;
  tensor.datatype = dt;
  tensor.shape = std::move(shape);
  call.request.inputs.push_back(std::move(tensor));
  return call;
}

std::string RenderTaskMetadata(const TaskInfo& task) {
  json inputs = json::array();
  inputs.push_back(
      {{"name", task.input_name}, {"datatype", task.input_datatype}, {"shape", task.input_shape}});
  json outputs = json::array();
  outputs.push_back({{"name", "output"}, {"datatype", "FP32"}, {"shape", {-1, 1}}});
  json doc = {
      {"name", task.name},
      {"versions", task.variants},
      {"platform", "sloserve"},
      {"inputs", std::move(inputs)},
      {"outputs", std::move(outputs)},
      {"parameters", {{"default_slo_ms", ToMillis(task.default_slo)}, {"apps", task.apps}}}};
  return doc.dump();
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

StatusOr<InferCall> ParseInferRequest(const TaskInfo& task, std::string_view body,
                                      Duration max_slo) {
  try {
    const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return InvalidArgumentError("malformed JSON in request body");
    return ParseInferDocument(task, doc, max_slo, body.size());
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("invalid request body: ") + e.what());
  }
}

KServeHandler::KServeHandler(Options options, std::vector<TaskInfo> tasks,
                             const InferenceBackend* backend, const ServerMetrics* metrics)
    : options_(std::move(options)), backend_(backend), metrics_(metrics) {
  for (TaskInfo& task : tasks) {
    std::string metadata = RenderTaskMetadata(task);
    std::string name = task.name;
    tasks_.emplace(std::move(name), TaskEntry{std::move(task), std::move(metadata)});
  }
  server_metadata_json_ = json{{"name", "sloserve"},
                               {"version", options_.server_version},
                               {"extensions", {"parameters", "sloserve_slo"}}}
                              .dump();
}

const KServeHandler::TaskEntry* KServeHandler::FindTask(std::string_view name) const {
  const auto it = tasks_.find(name);
  return it == tasks_.end() ? nullptr : &it->second;
}

std::variant<HttpResponse, InferCall> KServeHandler::Route(HttpMethod method,
                                                           std::string_view target,
                                                           std::string_view body) const {
  target = target.substr(0, target.find('?'));
  constexpr std::string_view kModels = "/v2/models/";
  if (target.starts_with(kModels)) return RouteModel(method, target.substr(kModels.size()), body);
  if (target == "/v2/health/live") {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET");
    return HttpResponse{200, "{\"live\":true}"};
  }
  if (target == "/v2/health/ready") {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET");
    if (backend_->Ready()) return HttpResponse{200, "{\"ready\":true}"};
    std::string out = "{\"ready\":false,\"reason\":";
    AppendJsonString(out, backend_->NotReadyReason());
    out += "}";
    return HttpResponse{503, std::move(out), "application/json", nullptr, "5"};
  }
  if (target == "/v2" || target == "/v2/") {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET");
    return HttpResponse{200, server_metadata_json_};
  }
  if (target == "/metrics") {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET");
    std::string text = metrics_ ? metrics_->RenderPrometheus() : std::string();
    if (backend_) text += backend_->PrometheusMetrics();
    return HttpResponse{200, std::move(text), "text/plain; version=0.0.4"};
  }
  return Error(404, "unknown path '" + std::string(target) + "'");
}

std::variant<HttpResponse, InferCall> KServeHandler::RouteModel(HttpMethod method,
                                                                std::string_view rest,
                                                                std::string_view body) const {
  const std::vector<std::string_view> parts = SplitPath(rest);
  const TaskEntry* task = FindTask(parts[0]);
  if (task == nullptr) return Error(404, "unknown model '" + std::string(parts[0]) + "'");
  size_t next = 1;
  bool versioned = false;
  if (parts.size() >= 3 && parts[1] == "versions") {
    const auto& variants = task->info.variants;
    if (std::find(variants.begin(), variants.end(), parts[2]) == variants.end()) {
      return Error(404, "unknown version '" + std::string(parts[2]) + "' of model '" +
                            task->info.name + "'");
    }
    versioned = true;
    next = 3;
  }
  const std::string_view action = next < parts.size() ? parts[next] : std::string_view();
  if (next + 1 < parts.size() || (next < parts.size() && action != "ready" && action != "infer")) {
    return Error(404, "unknown path '/v2/models/" + std::string(rest) + "'");
  }
  if (action.empty()) {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET");
    return HttpResponse{200, task->metadata_json};
  }
  if (action == "ready") {
    if (method != HttpMethod::kGet) return MethodNotAllowed("GET");
    const bool ready = backend_->Ready();
    std::string out = "{\"name\":";
    AppendJsonString(out, task->info.name);
    if (ready) {
      out += ",\"ready\":true}";
      return HttpResponse{200, std::move(out)};
    }
    out += ",\"ready\":false,\"reason\":";
    AppendJsonString(out, backend_->NotReadyReason());
    out += "}";
    return HttpResponse{503, std::move(out), "application/json", nullptr, "5"};
  }
  // action == "infer"
  if (method != HttpMethod::kPost) return MethodNotAllowed("POST");
  if (versioned) {
    return Error(404, "pinning a version is not supported; POST /v2/models/" + task->info.name +
                          "/infer and sloserve chooses the variant");
  }
  StatusOr<InferCall> call = ParseInferRequest(task->info, body, options_.max_slo);
  if (!call.ok()) return Error(HttpStatusFromCode(call.status().code()), call.status().message());
  return std::move(call).value();
}

HttpResponse KServeHandler::RenderOutcome(const InferCall& call,
                                          const InferOutcome& outcome) const {
  if (!outcome.status.ok()) {
    return Error(HttpStatusFromCode(outcome.status.code()), outcome.status.message());
  }
  const int32_t rows = call.request.rows;
  std::string out;
  out.reserve(320 + static_cast<size_t>(rows) * 4);
  out += "{\"model_name\":";
  AppendJsonString(out, call.request.task);
  out += ",\"model_version\":";
  AppendJsonString(out, outcome.variant);
  if (call.has_id) {
    out += ",\"id\":";
    AppendJsonString(out, call.id);
  }
  if (outcome.outputs.empty()) {
    // No computed outputs (the emulated executor): a zero output per row, as always.
    out += ",\"outputs\":[{\"name\":\"output\",\"datatype\":\"FP32\",\"shape\":[";
    out += std::to_string(rows);
    out += ",1],\"data\":[";
    for (int32_t i = 0; i < rows; ++i) out += i == 0 ? "0.0" : ",0.0";
    out += "]}]";
  } else {
    out += ",\"outputs\":[";
    for (size_t i = 0; i < outcome.outputs.size(); ++i) {
      if (i > 0) out += ',';
      const Tensor& t = outcome.outputs[i];
      if (!AppendOutputTensor(out, t)) {
        return Error(500, "the executor returned a malformed output tensor '" + t.name +
                              "' (datatype '" + t.datatype + "', " + std::to_string(t.data.size()) +
                              " bytes for shape " + ShapeString(t.shape) + ")");
      }
    }
    out += "]";
  }
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
  out += outcome.met_slo ? ",\"met_slo\":true}}" : ",\"met_slo\":false}}";
  return HttpResponse{200, std::move(out)};
}

}  // namespace sloserve

#include "sloserve/server/infer_request_checks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "sloserve/core/declared_key.h"
#include "sloserve/core/echo_name.h"

namespace sloserve {

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Status CheckShape(const std::vector<int64_t>& shape, const TaskInfo& task) {
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
  return OkStatus();
}

Duration DefaultSlo(const TaskInfo& task, Duration max_slo) {
  return task.default_slo > Duration::zero() ? task.default_slo : max_slo;
}

StatusOr<Duration> SloFromMillis(double ms, const TaskInfo& task, Duration max_slo) {
  const double max_ms = ToMillis(max_slo);
  if (!std::isfinite(ms) || ms <= 0 || ms > max_ms) {
    return InvalidArgumentError("parameter 'slo_ms' must be in (0, " +
                                std::to_string(static_cast<int64_t>(max_ms)) + "]");
  }
  const Duration slo = std::max(MillisF(ms), Micros(1));
  RETURN_IF_ERROR(CheckSloAchievable(slo, task));
  return slo;
}

StatusOr<InferBodyParts> SplitInferBody(std::string_view body, std::string_view json_length) {
  InferBodyParts parts{body, {}, false};
  if (!json_length.empty()) {
    const std::optional<uint64_t> length = ParseUnsigned(json_length);
    if (!length || *length == 0 || *length > body.size()) {
      return InvalidArgumentError("Inference-Header-Content-Length '" + EchoName(json_length) +
                                  "' must be an integer in [1, " + std::to_string(body.size()) +
                                  "] (the body's length)");
    }
    parts = InferBodyParts{body.substr(0, *length), body.substr(*length), true};
  }
  if (const size_t nul = parts.json.find('\0'); nul != std::string_view::npos) {
    return InvalidArgumentError("malformed JSON in request body: a NUL byte at offset " +
                                std::to_string(nul));
  }
  return parts;
}

Status MalformedJson(const InferBodyParts& parts) {
  if (!parts.split) return InvalidArgumentError("malformed JSON in request body");
  return InvalidArgumentError("malformed JSON in request body (its first " +
                              std::to_string(parts.json.size()) +
                              " bytes, as Inference-Header-Content-Length says)");
}

}  // namespace sloserve

#pragma once
// Checks shared by the inference request parsers (the tree-free fast path, the streaming
// parser and the tree parser kept as their reference), so each answers with the same
// message for the same problem. Rules: docs/protocol.md.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/server/inference_backend.h"

namespace sloserve {

// "[2,4]"
std::string ShapeString(const std::vector<int64_t>& shape);

// A shape of non-negative integers against the task's declared input shape.
Status CheckShape(const std::vector<int64_t>& shape, const TaskInfo& task);

// The SLO a request gets without parameters.slo_ms.
Duration DefaultSlo(const TaskInfo& task, Duration max_slo);

// parameters.slo_ms, range-checked.
StatusOr<Duration> SloFromMillis(double ms, const TaskInfo& task, Duration max_slo);

// A request body's JSON document and the binary tensor data after it. The whole body is
// JSON unless `json_length` (the Inference-Header-Content-Length header) gives the JSON
// part's length, which must be an integer in [1, body size]. A NUL byte in the JSON part
// is refused here: JSON allows none, and the parser would take it for the end of input
// (what followed it was accepted unread).
struct InferBodyParts {
  std::string_view json;
  std::string_view binary;
  bool split = false;  // by Inference-Header-Content-Length
};
StatusOr<InferBodyParts> SplitInferBody(std::string_view body, std::string_view json_length);

// The error for a JSON part that does not parse (naming the header that cut it, if one did).
Status MalformedJson(const InferBodyParts& parts);

}  // namespace sloserve

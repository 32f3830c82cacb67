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
StatusOr<Duration> SloFromMillis(double ms, Duration max_slo);

// The Inference-Header-Content-Length header: the length of the JSON part of a body that
// carries binary tensor data after it.
StatusOr<size_t> JsonLength(std::string_view header, size_t body_bytes);

}  // namespace sloserve

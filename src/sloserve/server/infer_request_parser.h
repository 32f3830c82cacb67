#pragma once
// The inference request document (POST /v2/models/{m}/infer) read in one streaming pass,
// without a JSON tree (issue 16): nlohmann's SAX parser feeds a handler that writes the
// input's `data` scalars straight into the tensor's typed buffer as they are read
// (nested arrays flattened in row-major order) and keeps every other field the
// validation needs as a small scalar. The validation then runs in the tree parser's
// order with its messages (ParseInferRequestWithTree, infer_request_tree.cc, the
// reference the tests compare against), so a client gets the same answer, valid or not.
//
// Memory: the tensor's bytes (its buffer reserved from the shape, capped by what the
// body can hold) plus a few bytes per open container; nothing per scalar. A document
// whose `data` comes before its `datatype` (or whose `datatype` is given twice) has the
// data read in a second pass rather than buffered.
//
// The JsonLimits (json_limits.h: depth, values, string length) are enforced during the
// pass, with their messages prefixed "request body: " as the HTTP server's pre-scan
// reports them, so a direct caller (gRPC-free tools, fuzzers) is bounded too.
#include <string_view>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/server/kserve_handler.h"

namespace sloserve {

// Same contract as ParseInferRequest (kserve_handler.h), which calls it after the fast path.
StatusOr<InferCall> ParseInferRequestStreaming(const TaskInfo& task, std::string_view body,
                                               Duration max_slo, std::string_view json_length = {});

}  // namespace sloserve

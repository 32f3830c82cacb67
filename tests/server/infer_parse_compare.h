#pragma once
// The inference request parsers (fast path, streaming) against their reference, the tree
// parser they replaced: what today's server answers is what the HTTP server's bounded
// pre-scan (json_limits.h) refuses, else ParseInferRequestWithTree's result.
#include <gtest/gtest.h>

#include <charconv>
#include <cstddef>
#include <random>
#include <string>
#include <string_view>

#include "sloserve/server/infer_request_parser.h"
#include "sloserve/server/json_limits.h"
#include "sloserve/server/kserve_handler.h"

namespace sloserve {

// `body` after one or two random single-character edits (replace, insert or erase) drawn
// from `alphabet`: most make it invalid JSON, or valid JSON of another meaning.
inline std::string RandomlyEdited(std::string body, std::string_view alphabet, std::mt19937& rng) {
  for (int edits = 1 + static_cast<int>(rng() % 2); edits > 0; --edits) {
    const size_t at = rng() % body.size();
    const char c = alphabet[rng() % alphabet.size()];
    switch (rng() % 3) {
      case 0:
        body[at] = c;
        break;
      case 1:
        body.insert(body.begin() + static_cast<std::ptrdiff_t>(at), c);
        break;
      default:
        body.erase(at, 1);
    }
  }
  return body;
}

// What the server would answer: the error message, or every field of the call.
inline std::string DescribeInferCall(const StatusOr<InferCall>& call) {
  if (!call.ok()) return "error: " + call.status().ToString();
  const InferRequest& r = call->request;
  std::string out = "task=" + r.task + " id=" + (call->has_id ? call->id : "<none>") +
                    " rows=" + std::to_string(r.rows) + " slo_ns=" + std::to_string(r.slo.count()) +
                    " app=" + r.app + " priority=" + std::to_string(r.priority) +
                    " binary_out=" + std::to_string(call->binary_outputs) + " outputs";
  for (const RequestedOutput& o : call->outputs) {
    out += " " + o.name + (o.binary ? "(binary)" : "");
  }
  for (const Tensor& t : r.inputs) {
    out += " [" + t.name + " " + t.datatype + " shape";
    for (int64_t d : t.shape) out += " " + std::to_string(d);
    out += " bytes";
    for (uint8_t b : t.data) out += " " + std::to_string(b);
    out += "]";
  }
  return out;
}

// The reference answer: the tree parser behind the limits' pre-scan of the JSON part.
inline StatusOr<InferCall> ParseInferRequestReference(const TaskInfo& task, std::string_view body,
                                                      std::string_view json_length = {}) {
  std::string_view json_part = body;
  size_t length = 0;
  if (!json_length.empty()) {
    const auto [end, err] =
        std::from_chars(json_length.data(), json_length.data() + json_length.size(), length);
    if (err == std::errc() && end == json_length.data() + json_length.size() &&
        length <= body.size()) {
      json_part = body.substr(0, length);
    }
  }
  const StatusOr<JsonShape> shape = ScanJsonShape(json_part, JsonLimits{});
  if (!shape.ok()) {
    return InvalidArgumentError("request body: " + std::string(shape.status().message()));
  }
  return ParseInferRequestWithTree(task, body, Seconds(60), json_length);
}

// ParseInferRequest (fast path, then streaming) and the streaming parser alone answer as
// the reference.
inline void ExpectSameAsTree(const TaskInfo& task, const std::string& body,
                             std::string_view json_length = {}) {
  const std::string want = DescribeInferCall(ParseInferRequestReference(task, body, json_length));
  EXPECT_EQ(DescribeInferCall(ParseInferRequest(task, body, Seconds(60), json_length)), want)
      << "body: " << body;
  EXPECT_EQ(DescribeInferCall(ParseInferRequestStreaming(task, body, Seconds(60), json_length)),
            want)
      << "body: " << body;
}

}  // namespace sloserve

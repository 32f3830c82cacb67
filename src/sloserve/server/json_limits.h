#pragma once
// A linear pre-scan of a JSON document that bounds what parsing it may cost, before any
// parse: nesting depth, number of values and string length. The HTTP server runs it on
// every POST body; the scan rejects documents beyond the limits with a message naming the
// limit, and returns the value count so the caller can charge the parse's memory to a
// budget first. The inference request's streaming parser (infer_request_parser.h)
// enforces the same limits itself; before it, the request was parsed into an
// nlohmann::json tree of ~16-32 bytes per value (a 16 MiB body of "0,0,..." is 8M
// values, ~256 MiB). The scan does not validate the JSON (the parser does); it only
// counts, skipping string contents correctly.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sloserve/core/status.h"

namespace sloserve {

struct JsonLimits {
  int max_depth = 64;                         // nested arrays/objects
  int64_t max_values = int64_t{4} << 20;      // scalars + containers (4Mi)
  size_t max_string_bytes = size_t{1} << 20;  // one string's encoded length (1 MiB)
};

struct JsonShape {
  int64_t values = 0;  // scalars + containers, an upper bound on the tree's nodes
  int depth = 0;       // deepest nesting seen
};

// The InvalidArgument errors naming each exceeded limit (the streaming request parser,
// infer_request_parser.h, enforces the same limits as it reads).
Status JsonStringTooLong(const JsonLimits& limits);
Status JsonNestedTooDeeply(const JsonLimits& limits);
Status JsonTooManyValues(const JsonLimits& limits);

// InvalidArgument naming the exceeded limit, or the shape of `doc`.
StatusOr<JsonShape> ScanJsonShape(std::string_view doc, const JsonLimits& limits);

// Bytes the parse of a document of `shape` is charged for the server's in-flight body
// budget: 32 per value, what a tree took (node size x values, doubled for container
// growth). The streaming parser keeps the tensor (at most 8 bytes per value, 24 while a
// buffer whose size the shape did not give grows; BYTES strings are the body's own
// bytes), so the charge is an upper bound.
size_t EstimatedTreeBytes(const JsonShape& shape);

}  // namespace sloserve

#pragma once
// The common inference request read without a JSON tree (issue 15, HTTP path): one input
// with name, datatype, shape and a flat `data` array, an optional string `id` and
// optional `parameters` holding only `slo_ms`. That is what nearly every client sends
// (the load generator, the benchmark, KServe's examples), and building an nlohmann tree
// for it (a node per number, a map per object) was the largest part of parsing.
//
// The scan is strict and narrow: it accepts only documents that are valid JSON of that
// exact shape, with strings free of escapes and non-ASCII bytes. Anything else (another
// key, a duplicate key, nesting, an escape, a number it cannot convert exactly as the
// tree parser would) returns nullopt and the caller parses the document with the tree,
// which also produces every error message. So the fast path decides nothing the tree
// path would decide differently; tests/server/infer_fast_path_test.cc compares the two.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace sloserve {

struct CommonInferRequest {
  std::optional<std::string_view> id;  // without quotes (no escapes inside)
  std::string_view input_name;
  std::string_view datatype;
  std::vector<int64_t> shape;    // non-negative integers
  std::string_view data;         // the text between `data`'s brackets
  std::optional<double> slo_ms;  // parameters.slo_ms
};

// The fields of `doc` when it is exactly the common shape, else nullopt.
std::optional<CommonInferRequest> ScanCommonInferRequest(std::string_view doc);

// Appends the FP32 bytes (little-endian) of the numbers of `list` (the text between a
// flat array's brackets) to `out`, converting each as the tree path does (through
// double, finite and within FLT_MAX); `count` receives how many. False when a value is
// not a number it converts the same way (the caller falls back to the tree path).
bool AppendFp32Numbers(std::string_view list, int64_t& count, std::vector<uint8_t>& out);

}  // namespace sloserve

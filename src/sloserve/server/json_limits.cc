#include "sloserve/server/json_limits.h"

#include <string>

namespace sloserve {

Status JsonStringTooLong(const JsonLimits& limits) {
  return InvalidArgumentError("JSON string longer than the limit of " +
                              std::to_string(limits.max_string_bytes) + " bytes");
}

Status JsonNestedTooDeeply(const JsonLimits& limits) {
  return InvalidArgumentError("JSON nested deeper than the limit of " +
                              std::to_string(limits.max_depth) + " levels");
}

Status JsonTooManyValues(const JsonLimits& limits) {
  return InvalidArgumentError("JSON document has more than the limit of " +
                              std::to_string(limits.max_values) + " values");
}

StatusOr<JsonShape> ScanJsonShape(std::string_view doc, const JsonLimits& limits) {
  JsonShape shape;
  int depth = 0;
  bool in_scalar = false;  // inside a number or literal (true/false/null)
  for (size_t i = 0; i < doc.size(); ++i) {
    const char c = doc[i];
    if (c == '"') {
      in_scalar = false;
      const size_t start = i;
      for (++i; i < doc.size() && doc[i] != '"'; ++i) {
        if (doc[i] == '\\') ++i;  // the escaped byte cannot end the string
      }
      if (i - start - 1 > limits.max_string_bytes) {
        return JsonStringTooLong(limits);
      }
      ++shape.values;  // a key counts too: it is a node of an object
    } else if (c == '[' || c == '{') {
      in_scalar = false;
      ++shape.values;
      if (++depth > limits.max_depth) {
        return JsonNestedTooDeeply(limits);
      }
      if (depth > shape.depth) shape.depth = depth;
    } else if (c == ']' || c == '}') {
      in_scalar = false;
      if (depth > 0) --depth;
    } else if (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      in_scalar = false;
    } else if (!in_scalar) {
      in_scalar = true;
      ++shape.values;
    }
    if (shape.values > limits.max_values) {
      return JsonTooManyValues(limits);
    }
  }
  return shape;
}

size_t EstimatedTreeBytes(const JsonShape& shape) {
  constexpr size_t kNodeBytes = 16;  // sizeof(nlohmann::json)
  return static_cast<size_t>(shape.values) * kNodeBytes * 2;
}

}  // namespace sloserve

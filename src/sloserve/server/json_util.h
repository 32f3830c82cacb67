#pragma once
// Small helpers to write JSON by hand on hot paths (responses are rendered without
// building an nlohmann::json tree).
#include <string>
#include <string_view>

namespace sloserve {

// Appends `s` as a quoted, escaped JSON string.
void AppendJsonString(std::string& out, std::string_view s);

// {"error":"<message>"}: the KServe v2 error body.
std::string ErrorJson(std::string_view message);

}  // namespace sloserve

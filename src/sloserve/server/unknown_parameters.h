#pragma once
// Request parameters sloserve does not know (`"slo": 5` for `slo_ms`) are not errors (KServe
// clients send their own), but ignoring them silently hides typos: the response carries a
// "warnings" entry for each, with the closest known name (docs/protocol.md, "Parameters").
#include <string>
#include <string_view>

namespace sloserve {

// Whether `name` is a request-level parameter sloserve reads.
bool IsKnownRequestParameter(std::string_view name);
// "unknown parameter 'slo' ignored (did you mean 'slo_ms'?)"; without a close known name,
// the list of known ones.
std::string UnknownParameterWarning(std::string_view name);
// At most this many warnings per response (a body of a thousand unknown keys stays small).
inline constexpr size_t kMaxParameterWarnings = 8;

}  // namespace sloserve

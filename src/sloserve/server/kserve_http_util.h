#pragma once
// Small pieces of the KServe v2 HTTP answers shared by the handler's files
// (kserve_handler.cc: routing and inference; kserve_repository.cc: the model list, the
// repository index and load/unload): error bodies, 405s and path segments.
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/server/kserve_handler.h"

namespace sloserve::kserve_http {

// Readiness false: the KServe v2 health API says "a 4xx status code indicates false";
// 400 is Triton's answer, and Kubernetes probes fail on any status >= 400 alike
// (docs/protocol.md, "Health"). Inference while not ready stays 503 (Unavailable).
inline constexpr int kNotReadyStatus = 400;

// {"error": message}; 429 and 503 carry Retry-After: 1.
HttpResponse Error(int status, std::string_view message);
// 405 with the Allow header.
HttpResponse MethodNotAllowed(const char* allow);
// The '/'-separated segments of a path, each percent-decoded (RFC 3986 2.1: "%2F" in a
// segment is a '/' in the name, not a separator); false on a malformed escape.
bool SplitPath(std::string_view s, std::vector<std::string>& parts);

}  // namespace sloserve::kserve_http

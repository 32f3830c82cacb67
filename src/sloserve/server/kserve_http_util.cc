#include "sloserve/server/kserve_http_util.h"

#include "sloserve/server/json_util.h"

namespace sloserve::kserve_http {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

HttpResponse Error(int status, std::string_view message) {
  HttpResponse r{status, ErrorJson(message)};
  // Overload (429) and not ready or stopping (503) pass: tell clients when to come back.
  if (status == 429 || status == 503) r.retry_after = "1";
  return r;
}

HttpResponse MethodNotAllowed(const char* allow) {
  HttpResponse r = Error(405, std::string("method not allowed; use ") + allow);
  r.allow = allow;
  return r;
}

bool SplitPath(std::string_view s, std::vector<std::string>& parts) {
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('/', start);
    if (end == std::string_view::npos) end = s.size();
    std::string& part = parts.emplace_back();
    for (size_t i = start; i < end; ++i) {
      if (s[i] != '%') {
        part += s[i];
        continue;
      }
      const int hi = i + 2 < end ? HexDigit(s[i + 1]) : -1;
      const int lo = hi >= 0 ? HexDigit(s[i + 2]) : -1;
      if (lo < 0) return false;
      part += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    start = end + 1;
  }
  return true;
}

}  // namespace sloserve::kserve_http

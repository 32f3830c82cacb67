#pragma once
// The port a `sloserve serve --port 0` process says it listens on ("listening on
// http://127.0.0.1:PORT" or https:// in its log), without <regex>: std::regex costs seconds of
// compile time per translation unit, times three builds in scripts/test.

#include <cctype>
#include <cstdint>
#include <string_view>

namespace sloserve::testing {

// 0 when the log names no such address (or the number is not a port).
inline uint16_t ListenPort(std::string_view log) {
  // "https://" when serving TLS.
  std::string_view kPrefix = "http://127.0.0.1:";
  size_t at = log.find(kPrefix);
  if (at == std::string_view::npos) at = log.find(kPrefix = "https://127.0.0.1:");
  if (at == std::string_view::npos) return 0;
  unsigned port = 0;
  size_t digits = 0;
  for (size_t i = at + kPrefix.size();
       i < log.size() && std::isdigit(static_cast<unsigned char>(log[i])); ++i, ++digits) {
    port = port * 10 + static_cast<unsigned>(log[i] - '0');
    if (port > 65535) return 0;
  }
  return digits == 0 ? 0 : static_cast<uint16_t>(port);
}

}  // namespace sloserve::testing

#pragma once
// The port a `sloserve serve --port 0` process says it listens on ("listening on
// http://127.0.0.1:PORT" or https:// in its log), without <regex>: std::regex costs seconds of
// compile time per translation unit, times three builds in scripts/test.

#include <cctype>
#include <cstdint>
#include <string_view>

namespace sloserve::testing {

// The port after the first `prefix` ("grpc://127.0.0.1:") in `log`; 0 when there is none
// (or the number is not a port).
inline uint16_t PortAfter(std::string_view log, std::string_view prefix) {
  const size_t at = log.find(prefix);
  if (at == std::string_view::npos) return 0;
  unsigned port = 0;
  size_t digits = 0;
  for (size_t i = at + prefix.size();
       i < log.size() && std::isdigit(static_cast<unsigned char>(log[i])); ++i, ++digits) {
    port = port * 10 + static_cast<unsigned>(log[i] - '0');
    if (port > 65535) return 0;
  }
  return digits == 0 ? 0 : static_cast<uint16_t>(port);
}

// 0 when the log names no such address (or the number is not a port).
inline uint16_t ListenPort(std::string_view log) {
  // "https://" when serving TLS.
  const uint16_t http = PortAfter(log, "http://127.0.0.1:");
  return http != 0 || log.find("http://127.0.0.1:") != std::string_view::npos
             ? http
             : PortAfter(log, "https://127.0.0.1:");
}

}  // namespace sloserve::testing

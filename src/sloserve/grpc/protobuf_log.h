#pragma once
// libprotobuf writes one `[libprotobuf ERROR ...]` line to stderr for each string field
// holding invalid UTF-8 that it parses, so any client could fill a server's log at the
// rate it sends requests. RouteProtobufLog replaces that with a rate-limited log: at
// most kProtobufLogBurst lines per minute, prefixed "sloserve: libprotobuf", and the
// number left out is printed with the first line of the next minute that has one.
#include <chrono>
#include <cstdint>
#include <string>

namespace sloserve::grpc_protocol {

inline constexpr int kProtobufLogBurst = 5;
inline constexpr std::chrono::seconds kProtobufLogWindow{60};

// Installs the handler for the whole process (every gRPC server and client); idempotent.
// Fatal messages are printed whatever the rate (libprotobuf aborts after them).
void RouteProtobufLog();

// The rate limit itself, for tests: whether a message at `now` is printed, and then the
// line to print (with the count left out since the last one printed, if any).
class LogRateLimit {
 public:
  bool Admit(std::chrono::steady_clock::time_point now, int64_t* left_out);

 private:
  std::chrono::steady_clock::time_point window_start_{};
  int printed_ = 0;
  int64_t left_out_ = 0;
};

}  // namespace sloserve::grpc_protocol

// libFuzzer target (docs/fuzzing.md): the HTTP/1.1 frontend as a client reaches it — a
// real HttpServer on 127.0.0.1 (Beast's request parser, the session's framing checks,
// the body budget, the pre-scan, the KServe v2 handler) in front of a FakeBackend.
// Each input is the bytes one connection sends (any number of pipelined requests); the
// client then half-closes and reads until the server closes.
// Properties: the server closes the connection (within 10 s: no request held forever),
// and what it answered, if anything, starts with an HTTP/1.x status line 100..599.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz_check.h"
#include "sloserve/server/http_server.h"
#include "support/fake_backend.h"

namespace sloserve {
namespace {

// Started once and never destroyed (libFuzzer exits without unwinding); held here so
// LeakSanitizer sees it reachable.
HttpServer* g_server = nullptr;

uint16_t ServerPort() {
  static const uint16_t port = [] {
    auto* backend = new FakeBackend();
    HttpServer::Options options;
    options.port = 0;
    options.threads = 2;
    options.max_body_bytes = 1 << 20;
    options.header_timeout = Seconds(2);
    options.body_timeout = Seconds(2);
    options.idle_timeout = Seconds(2);
    options.offload_parse_bytes = 4096;  // small enough that inputs reach the parse pool
    auto server = HttpServer::Create(options, backend);
    if (!server.ok()) fuzz::Fail("HttpServer::Create", server.status().message());
    auto bound = (*server)->Start();
    if (!bound.ok()) fuzz::Fail("HttpServer::Start", bound.status().message());
    g_server = server->release();
    return *bound;
  }();
  return port;
}

}  // namespace
}  // namespace sloserve

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sloserve;
  const uint16_t port = ServerPort();
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  fuzz::Check(fd >= 0, "socket()");
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  fuzz::Check(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "connect()");
  // The server may answer and close before reading everything (an error): stop sending.
  for (size_t sent = 0; sent < size;) {
    const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      answer.append(buf, static_cast<size_t>(n));
      continue;
    }
    fuzz::Check(!(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)),
                "the server kept the connection open 10 s after the client's last byte");
    break;  // closed (0) or reset (ECONNRESET after an error answer)
  }
  ::close(fd);
  if (!answer.empty()) {
    const bool status_line = answer.size() >= 12 && answer.compare(0, 7, "HTTP/1.") == 0 &&
                             answer[8] == ' ' && answer[9] >= '1' && answer[9] <= '5';
    fuzz::Check(status_line, "answer does not start with a status line", answer.substr(0, 64));
  }
  return 0;
}

#pragma once
// A small synchronous HTTP/1.1 client for tests (Beast hidden in http_client.cc). Every
// operation is bounded by a timeout. One client = one connection, reused (keep-alive)
// until the server closes it.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"

namespace sloserve {

struct TestResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string allow;
  bool keep_alive = false;
};

class TestHttpClient {
 public:
  explicit TestHttpClient(Duration timeout = Seconds(10));
  ~TestHttpClient();

  Status Connect(uint16_t port, const std::string& host = "127.0.0.1");
  bool connected() const;
  // The bound on each later operation (e.g. connect with the default, then wait briefly
  // for a response that is not expected).
  void set_timeout(Duration timeout);

  StatusOr<TestResponse> Request(std::string_view method, std::string_view target,
                                 std::string_view body = {},
                                 std::string_view content_type = "application/json");
  StatusOr<TestResponse> Get(std::string_view target) { return Request("GET", target); }
  StatusOr<TestResponse> Post(std::string_view target, std::string_view body) {
    return Request("POST", target, body);
  }

  // Writes raw bytes, then reads until the server closes the connection or the timeout
  // expires; returns what was read (possibly empty).
  StatusOr<std::string> SendRaw(std::string_view bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-shot helpers (a fresh connection each).
StatusOr<TestResponse> HttpGet(uint16_t port, std::string_view target);
StatusOr<TestResponse> HttpPost(uint16_t port, std::string_view target, std::string_view body);

}  // namespace sloserve

#pragma once
// Starts a real HttpServer on 127.0.0.1:<ephemeral> in front of a FakeBackend.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "server/http_client.h"
#include "sloserve/server/http_server.h"
#include "support/fake_backend.h"

namespace sloserve {

inline std::string InferBody(int rows = 2, const std::string& extra = "") {
  std::string data;
  for (int i = 0; i < rows * 3; ++i) data += (i ? ",1.5" : "1.5");
  return R"({"id":"r1","inputs":[{"name":"input","shape":[)" + std::to_string(rows) +
         R"(,3],"datatype":"FP32","data":[)" + data + "]}]" + extra + "}";
}

class ServerFixture : public ::testing::Test {
 protected:
  void StartServer(FakeBackend::Options backend_options = {},
                   HttpServer::Options server_options = {}) {
    backend_ = std::make_unique<FakeBackend>(std::move(backend_options));
    server_options.host = "127.0.0.1";
    server_options.port = 0;
    auto server = HttpServer::Create(server_options, backend_.get());
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }
  void TearDown() override {
    if (server_) server_->Stop();
    server_.reset();
    backend_.reset();
  }

  TestResponse Get(const std::string& target) {
    auto r = HttpGet(port_, target);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : TestResponse{};
  }
  TestResponse Post(const std::string& target, const std::string& body) {
    auto r = HttpPost(port_, target, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : TestResponse{};
  }

  std::unique_ptr<FakeBackend> backend_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
};

}  // namespace sloserve

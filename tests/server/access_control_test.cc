// Model control and the admin token over a real HttpServer on 127.0.0.1 (docs/serve.md
// "Security"): load/unload refused by default, the token checked on control, statistics,
// and (when asked) inference and /metrics; plus the token file and the comparison.
#include "sloserve/server/access_control.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "server/server_fixture.h"
#include "support/http_get.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

constexpr char kToken[] = "s3cret-token-0123456789abcdef";

struct Raw {
  int status = 0;
  std::string text;  // the whole response
  bool Has(const std::string& s) const { return text.find(s) != std::string::npos; }
};

class AccessTest : public ServerFixture {
 protected:
  void Start(AccessOptions access) {
    HttpServer::Options options;
    options.access = std::move(access);
    StartServer({}, options);
  }
  // One HTTP/1.0 exchange with optional Authorization header.
  Raw Send(const std::string& method, const std::string& target, const std::string& body = "",
           const std::string& authorization = "") {
    std::string req = method + " " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n";
    if (!authorization.empty()) req += "Authorization: " + authorization + "\r\n";
    if (method == "POST") {
      req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
             "\r\n";
    }
    req += "\r\n" + body;
    Raw r;
    r.text = testing::HttpExchange(port_, req);
    if (r.text.size() > 12) r.status = std::atoi(r.text.c_str() + 9);
    return r;
  }
  static std::string Bearer(const std::string& token) { return "Bearer " + token; }
};

TEST_F(AccessTest, LoadAndUnloadRefusedByDefaultIndexReadable) {
  Start({});
  for (const char* action : {"load", "unload"}) {
    const Raw r = Send("POST", std::string("/v2/repository/models/image/") + action);
    EXPECT_EQ(r.status, 403) << r.text;
    EXPECT_TRUE(r.Has("server.model_control: explicit")) << r.text;  // says how to enable
    EXPECT_TRUE(r.Has("\"error\"")) << r.text;
  }
  // Even with a path the router would not know: the namespace is closed.
  EXPECT_EQ(Send("POST", "/v2/repository/models/image/%75nload").status, 403);
  EXPECT_EQ(backend_->repository_calls(), 0);
  const Raw index = Send("POST", "/v2/repository/index");
  EXPECT_EQ(index.status, 200) << index.text;
  EXPECT_TRUE(index.Has("\"name\":\"image\"")) << index.text;
  // Open by default: inference, statistics, metrics.
  EXPECT_EQ(Send("POST", "/v2/models/image/infer", InferBody()).status, 200);
  EXPECT_EQ(Send("GET", "/v2/models/image/stats").status, 200);
  const Raw metrics = Send("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_FALSE(metrics.Has("tls_handshake")) << "plain HTTP renders no TLS counter";
}

TEST_F(AccessTest, ExplicitWithoutTokenAllowsControl) {
  Start({ModelControl::kExplicit, "", false, false});
  EXPECT_EQ(Send("POST", "/v2/repository/models/image/unload").status, 200);
  EXPECT_EQ(Send("POST", "/v2/repository/models/image/load").status, 200);
  EXPECT_EQ(backend_->repository_calls(), 2);
}

TEST_F(AccessTest, ControlNeedsTheRightToken) {
  Start({ModelControl::kExplicit, kToken, false, false});
  const std::string unload = "/v2/repository/models/image/unload";
  Raw r = Send("POST", unload);
  EXPECT_EQ(r.status, 401) << r.text;
  EXPECT_TRUE(r.Has("\r\nWWW-Authenticate: Bearer realm=\"sloserve\"\r\n")) << r.text;
  r = Send("POST", unload, "", Bearer("s3cret-token-0123456789abcdeX"));  // last byte wrong
  EXPECT_EQ(r.status, 401) << r.text;
  EXPECT_TRUE(r.Has("WWW-Authenticate: Bearer realm=\"sloserve\", error=\"invalid_token\""))
      << r.text;
  EXPECT_EQ(Send("POST", unload, "", Bearer(std::string(kToken) + "x")).status, 401);  // longer
  EXPECT_EQ(Send("POST", unload, "", Bearer("s3cret")).status, 401);                   // prefix
  EXPECT_EQ(Send("POST", unload, "", std::string("Basic ") + kToken).status, 401);
  EXPECT_EQ(backend_->repository_calls(), 0);
  r = Send("POST", unload, "", Bearer(kToken));
  EXPECT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(
      Send("POST", "/v2/repository/models/image/load", "", std::string("bearer ") + kToken).status,
      200);  // the scheme is case-insensitive (RFC 9110 11.1)
  EXPECT_EQ(backend_->repository_calls(), 2);
}

TEST_F(AccessTest, TokenProtectsStatisticsNotInferenceByDefault) {
  Start({ModelControl::kNone, kToken, false, false});
  for (const char* stats :
       {"/v2/models/stats", "/v2/models/image/stats", "/v2/models/image/%73tats"}) {
    const Raw r = Send("GET", stats);
    EXPECT_EQ(r.status, 401) << stats << "\n" << r.text;
    EXPECT_TRUE(r.Has("WWW-Authenticate: Bearer")) << r.text;
    EXPECT_EQ(Send("GET", stats, "", Bearer(kToken)).status, 200) << stats;
  }
  // Control stays off whatever the token.
  EXPECT_EQ(Send("POST", "/v2/repository/models/image/unload", "", Bearer(kToken)).status, 403);
  EXPECT_EQ(Send("POST", "/v2/models/image/infer", InferBody()).status, 200);
  EXPECT_EQ(Send("GET", "/metrics").status, 200);  // unless require_token_for_metrics
  EXPECT_EQ(Send("GET", "/v2/health/ready").status, 200);
  EXPECT_EQ(Send("GET", "/v2/models/image").status, 200);
}

TEST_F(AccessTest, RequireTokenForInferAndMetrics) {
  Start({ModelControl::kNone, kToken, true, true});
  const int64_t before = backend_->submitted();
  Raw r = Send("POST", "/v2/models/image/infer", InferBody());
  EXPECT_EQ(r.status, 401) << r.text;
  EXPECT_TRUE(r.Has("WWW-Authenticate: Bearer")) << r.text;
  EXPECT_EQ(
      Send("POST", "/v2/models/image/%69nfer", InferBody(), Bearer("wrong-token-xxxxxxxx")).status,
      401);
  EXPECT_EQ(backend_->submitted(), before);  // refused before the backend
  EXPECT_EQ(Send("POST", "/v2/models/image/infer", InferBody(), Bearer(kToken)).status, 200);
  EXPECT_EQ(Send("GET", "/metrics").status, 401);
  EXPECT_EQ(Send("GET", "/metrics", "", Bearer(kToken)).status, 200);
  EXPECT_EQ(Send("GET", "/v2/health/live").status, 200);  // health stays open
}

TEST(AccessControlTest, RequireTokenWithoutTokenIsRefused) {
  EXPECT_FALSE(AccessControl::Validate({ModelControl::kNone, "", true, false}).ok());
  EXPECT_FALSE(AccessControl::Validate({ModelControl::kNone, "", false, true}).ok());
  EXPECT_TRUE(AccessControl::Validate({ModelControl::kExplicit, "", false, false}).ok());
  FakeBackend backend;
  HttpServer::Options options;
  options.access.require_token_for_infer = true;
  EXPECT_FALSE(HttpServer::Create(options, &backend).ok());
}

TEST(AccessControlTest, TokenFile) {
  testing::ScopedTempDir dir("token");
  const std::string path = dir.File("token");
  std::ofstream(path) << "  " << kToken << "\n\n";
  auto token = ReadTokenFile(path);
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, kToken);
  std::ofstream(path) << "short\n";
  EXPECT_FALSE(ReadTokenFile(path).ok());
  std::ofstream(path) << "two words in a token file\n";
  EXPECT_FALSE(ReadTokenFile(path).ok());
  EXPECT_FALSE(ReadTokenFile(dir.File("missing")).ok());
}

TEST(AccessControlTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abcabc", "abc"));  // repeated expected bytes
  EXPECT_FALSE(ConstantTimeEquals("", "abc"));
}

}  // namespace
}  // namespace sloserve

// HTTPS on a real HttpServer on 127.0.0.1 with certificates made by the openssl CLI at
// test time (support/test_pki.h): TLS clients that trust the CA are served, a plain-HTTP
// client and a client that does not trust the server get no HTTP response; with a client
// CA, only a client presenting a certificate that CA signed is served.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "server/https_client.h"
#include "server/server_fixture.h"
#include "support/http_get.h"
#include "support/test_pki.h"

namespace sloserve {
namespace {

class TlsTest : public ServerFixture {
 protected:
  void SetUp() override { ASSERT_TRUE(pki_.ok) << pki_.log; }
  void Start(bool verify_clients, AccessOptions access = {}) {
    HttpServer::Options options;
    options.tls = {pki_.Pem("server"), pki_.Key("server"),
                   verify_clients ? pki_.Pem("ca") : std::string()};
    options.access = std::move(access);
    StartServer({}, options);
  }
  HttpsClientFiles Client(const std::string& trust, const std::string& cert = "") const {
    HttpsClientFiles files{pki_.Pem(trust), "", ""};
    if (!cert.empty()) files = {pki_.Pem(trust), pki_.Pem(cert), pki_.Key(cert)};
    return files;
  }

  // Made once for the binary, on first use (not at start-up: other tests need no openssl).
  static const testing::TestPki& Pki() {
    static const testing::TestPki pki("tls-test");
    return pki;
  }
  const testing::TestPki& pki_ = Pki();
};

TEST_F(TlsTest, ServesHttpsAndRefusesPlainHttp) {
  Start(/*verify_clients=*/false);
  auto r = HttpsRequest(port_, Client("ca"), "POST", "/v2/models/image/infer", InferBody());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(backend_->submitted(), 1);
  r = HttpsRequest(port_, Client("ca"), "GET", "/v2/health/ready");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  // Plain HTTP on the TLS port: the handshake fails on its first bytes; no HTTP answer.
  const std::string plain =
      testing::HttpExchange(port_, testing::HttpPostRequest("/v2/models/image/infer", InferBody()));
  EXPECT_EQ(plain.find("HTTP/"), std::string::npos) << plain;
  EXPECT_EQ(backend_->submitted(), 1);
  EXPECT_EQ(server_->metrics().TlsHandshakeFailures(), 1);
  // A client that trusts another CA refuses our certificate.
  r = HttpsRequest(port_, Client("other-ca"), "GET", "/v2/health/ready");
  EXPECT_FALSE(r.ok());
  // The server keeps serving after the failed handshakes, and /metrics counts them.
  r = HttpsRequest(port_, Client("ca"), "GET", "/metrics");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  // At least the plain-HTTP one (the untrusting client's may still be on its way).
  const std::string key = "\nsloserve_http_tls_handshake_failures_total ";
  const size_t at = r->body.find(key);
  ASSERT_NE(at, std::string::npos) << r->body;
  EXPECT_GE(std::stoll(r->body.substr(at + key.size())), 1) << r->body;
}

TEST_F(TlsTest, ClientCertificatesVerified) {
  Start(/*verify_clients=*/true);
  auto r = HttpsRequest(port_, Client("ca"), "POST", "/v2/models/image/infer", InferBody());
  EXPECT_FALSE(r.ok()) << "served without a client certificate: " << r->status;
  r = HttpsRequest(port_, Client("ca", "other-client"), "POST", "/v2/models/image/infer",
                   InferBody());
  EXPECT_FALSE(r.ok()) << "served a certificate from another CA: " << r->status;
  EXPECT_EQ(backend_->submitted(), 0);
  r = HttpsRequest(port_, Client("ca", "client"), "POST", "/v2/models/image/infer", InferBody());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(backend_->submitted(), 1);
}

TEST_F(TlsTest, TokenOverTls) {
  constexpr char kToken[] = "tls-admin-token-0123456789";
  Start(/*verify_clients=*/false, {ModelControl::kExplicit, kToken, false, false});
  auto r = HttpsRequest(port_, Client("ca"), "POST", "/v2/repository/models/image/unload");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 401);
  r = HttpsRequest(port_, Client("ca"), "POST", "/v2/repository/models/image/unload", "",
                   std::string("Bearer ") + kToken);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(backend_->repository_calls(), 1);
}

// ReloadTls (serve's SIGHUP): new connections get the re-read certificate; a broken file
// leaves the previous one in place.
TEST_F(TlsTest, ReloadServesTheNewCertificate) {
  const std::string cert = pki_.dir.File("live.pem"), key = pki_.dir.File("live.key");
  const auto install = [&](const std::string& name) {
    std::filesystem::copy_file(pki_.Pem(name), cert,
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(pki_.Key(name), key,
                               std::filesystem::copy_options::overwrite_existing);
  };
  install("server");
  HttpServer::Options options;
  options.tls = {cert, key, ""};
  StartServer({}, options);
  auto r = HttpsRequest(port_, Client("ca"), "GET", "/v2/health/live");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(HttpsRequest(port_, Client("other-ca"), "GET", "/v2/health/live").ok());

  install("other-server");
  ASSERT_TRUE(server_->ReloadTls().ok());
  r = HttpsRequest(port_, Client("other-ca"), "GET", "/v2/health/live");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(HttpsRequest(port_, Client("ca"), "GET", "/v2/health/live").ok());

  std::ofstream(cert) << "not a certificate\n";
  const Status broken = server_->ReloadTls();
  EXPECT_FALSE(broken.ok());
  EXPECT_NE(broken.message().find("live.pem"), std::string::npos) << broken.ToString();
  r = HttpsRequest(port_, Client("other-ca"), "GET", "/v2/health/live");
  ASSERT_TRUE(r.ok()) << r.status().ToString();  // still the last good certificate
  EXPECT_EQ(r->status, 200);
}

TEST_F(TlsTest, ReloadWithoutTlsRefused) {
  StartServer();
  EXPECT_EQ(server_->ReloadTls().code(), StatusCode::kFailedPrecondition);
}

TEST_F(TlsTest, BadFilesRefusedAtCreate) {
  FakeBackend backend;
  HttpServer::Options options;
  options.tls = {pki_.Pem("server"), pki_.Key("client"), ""};  // not the certificate's key
  auto server = HttpServer::Create(options, &backend);
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("server.tls_key_file"), std::string::npos)
      << server.status().ToString();
  options.tls = {pki_.dir.File("missing.pem"), pki_.Key("server"), ""};
  server = HttpServer::Create(options, &backend);
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("missing.pem"), std::string::npos)
      << server.status().ToString();
  options.tls = {pki_.Pem("server"), "", ""};  // a certificate without its key
  EXPECT_FALSE(HttpServer::Create(options, &backend).ok());
  options.tls = {"", "", pki_.Pem("ca")};  // client CA without TLS
  EXPECT_FALSE(HttpServer::Create(options, &backend).ok());
}

}  // namespace
}  // namespace sloserve

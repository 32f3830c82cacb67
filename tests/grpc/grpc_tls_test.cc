// TLS on a real `sloserve serve` process (HTTP and gRPC ports) with certificates made by
// the openssl CLI at test time: with server.tls_client_ca_file, a gRPC client is served
// only with a certificate the CA signed (not without one, not with another CA's, not over
// plaintext); a plain-HTTP client gets no HTTP answer; `sloserve loadgen --tls-ca
// --tls-cert --tls-key` drives the HTTPS port; SIGHUP re-reads the certificate (both ports).
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grpc/grpc_test_util.h"
#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "support/test_pki.h"

namespace sloserve {
namespace {

using inference::GRPCInferenceService;
using testing::Subprocess;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class GrpcTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new testing::TestPki("grpc-tls");
    ASSERT_TRUE(pki_->ok) << pki_->log;
    const std::string config = pki_->dir.File("serve.yaml");
    std::ofstream(config) << "suite: ramsis-image\ntask: image\nhardware: n1-4cpu\nworkers: 1\n"
                             "slo_ms: 150\nseed: 1\nexecutor: {latency: sample}\n"
                             "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                             "selection: fixed, variant: efficientnet_b0}\n"
                             "server:\n  input_shape: \"-1,16\"\n"
                             "  tls_cert_file: "
                          << pki_->Pem("server")
                          << "\n"
                             "  tls_key_file: "
                          << pki_->Key("server")
                          << "\n"
                             "  tls_client_ca_file: "
                          << pki_->Pem("ca") << "\n";
    grpc_port_ = testing::FreeTcpPort();
    process_ = new Subprocess({testing::kBin, "serve", config, "--port", "0", "--grpc-port",
                               std::to_string(grpc_port_), "--duration", "120"});
    ASSERT_TRUE(process_->WaitForStderr("sloserve: ready", std::chrono::seconds(60)))
        << process_->err();
    http_port_ = testing::ListenPort(process_->err());
  }
  static void TearDownTestSuite() {
    delete process_;
    delete pki_;
  }

  // A stub over TLS trusting `trust`, presenting `cert` unless empty.
  static std::unique_ptr<GRPCInferenceService::Stub> Stub(const std::string& trust,
                                                          const std::string& cert) {
    ::grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = ReadAll(pki_->Pem(trust));
    if (!cert.empty()) {
      ssl.pem_cert_chain = ReadAll(pki_->Pem(cert));
      ssl.pem_private_key = ReadAll(pki_->Key(cert));
    }
    ::grpc::ChannelArguments args;
    args.SetSslTargetNameOverride("localhost");  // the certificate's name (127.0.0.1 too)
    return GRPCInferenceService::NewStub(::grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(grpc_port_), ::grpc::SslCredentials(ssl), args));
  }
  static ::grpc::Status Live(GRPCInferenceService::Stub* stub) {
    inference::ServerLiveRequest req;
    inference::ServerLiveResponse resp;
    return stub->ServerLive(testing::Deadline(std::chrono::seconds(5)).get(), req, &resp);
  }

  static testing::TestPki* pki_;
  static Subprocess* process_;
  static uint16_t grpc_port_, http_port_;
};

testing::TestPki* GrpcTlsTest::pki_ = nullptr;
Subprocess* GrpcTlsTest::process_ = nullptr;
uint16_t GrpcTlsTest::grpc_port_ = 0;
uint16_t GrpcTlsTest::http_port_ = 0;

TEST_F(GrpcTlsTest, ClientCertificateRequired) {
  EXPECT_NE(process_->err().find("listening on https://"), std::string::npos) << process_->err();
  EXPECT_NE(process_->err().find("TLS with client certificates"), std::string::npos)
      << process_->err();
  auto good = Stub("ca", "client");
  ::grpc::Status s = Live(good.get());
  ASSERT_TRUE(s.ok()) << s.error_message();
  inference::ModelInferResponse resp;
  s = good->ModelInfer(testing::Deadline().get(),
                       testing::ImageRequest(testing::ImageMetadata(good.get()), 2), &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();

  EXPECT_FALSE(Live(Stub("ca", "").get()).ok()) << "served without a client certificate";
  EXPECT_FALSE(Live(Stub("ca", "other-client").get()).ok()) << "served another CA's client";
  EXPECT_FALSE(Live(Stub("other-ca", "client").get()).ok()) << "a client trusted another CA";
  auto plain = GRPCInferenceService::NewStub(testing::LocalChannel(grpc_port_));
  EXPECT_FALSE(Live(plain.get()).ok()) << "served plaintext gRPC on the TLS port";
  // Still serving after the refusals.
  EXPECT_TRUE(Live(good.get()).ok());
}

TEST_F(GrpcTlsTest, PlainHttpRefusedLoadgenOverHttps) {
  const std::string plain =
      testing::HttpExchange(http_port_, "GET /v2/health/ready HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(plain.find("HTTP/"), std::string::npos) << plain;
  const std::vector<std::string> loadgen = {
      testing::kBin,   "loadgen", "--port",  std::to_string(http_port_),
      "--model",       "image",   "--qps",   "50",
      "--duration",    "1",       "--shape", "1,16",
      "--connections", "2",       "--json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = loadgen;
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::RunProcess(args);
  };
  testing::ProcessResult r = with({"--tls-ca", pki_->Pem("ca"), "--tls-cert", pki_->Pem("client"),
                                   "--tls-key", pki_->Key("client")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.out;
  // Every request got an HTTP answer over TLS (200, or 429 if this busy machine's one
  // emulated worker fell behind: admission, not TLS).
  EXPECT_GT(report.value("ok", 0), 0) << r.out;
  EXPECT_EQ(report.value("transport_errors", -1), 0) << r.out;
  EXPECT_EQ(report.value("timeouts", -1), 0) << r.out;
  EXPECT_EQ(report.value("ok", 0) + report.value("http_errors", 0), report.value("sent", -1))
      << r.out;
  // Without the client certificate the server refuses it: an error, or nothing served.
  r = with({"--tls-ca", pki_->Pem("ca"), "--wait-ready", "0"});
  if (r.exit_code == 0) {
    EXPECT_EQ(nlohmann::json::parse(r.out, nullptr, false).value("ok", -1), 0) << r.out;
  }
}

// serve re-reads its certificate on SIGHUP: `sloserve loadgen --tls-ca` trusting only
// the second CA is refused before and served after the files are replaced and signalled.
TEST(ServeTlsReloadTest, SighupRereadsTheCertificate) {
  testing::TestPki pki("tls-reload");
  ASSERT_TRUE(pki.ok) << pki.log;
  const std::string cert = pki.dir.File("live.pem"), key = pki.dir.File("live.key");
  const auto install = [&](const std::string& name) {
    std::filesystem::copy_file(pki.Pem(name), cert,
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(pki.Key(name), key,
                               std::filesystem::copy_options::overwrite_existing);
  };
  install("server");
  const uint16_t grpc_port = testing::FreeTcpPort();
  Subprocess serve({testing::kBin, "serve", "--port", "0", "--grpc-port", std::to_string(grpc_port),
                    "--duration", "120", "--set", "server.tls_cert_file=" + cert, "--set",
                    "server.tls_key_file=" + key, "--set", "server.input_shape=-1,16"});
  // ServerLive over a new gRPC connection trusting only `ca`.
  const auto grpc_live = [&](const std::string& ca) {
    ::grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = ReadAll(pki.Pem(ca));
    ::grpc::ChannelArguments args;
    args.SetSslTargetNameOverride("localhost");
    args.SetInt("grpc.use_local_subchannel_pool", 1);  // a connection of its own
    auto stub = GRPCInferenceService::NewStub(::grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(grpc_port), ::grpc::SslCredentials(ssl), args));
    inference::ServerLiveRequest req;
    inference::ServerLiveResponse resp;
    return stub->ServerLive(testing::Deadline(std::chrono::seconds(5)).get(), req, &resp).ok();
  };
  ASSERT_TRUE(serve.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << serve.err();
  const uint16_t port = testing::ListenPort(serve.err());
  const auto loadgen = [&] {
    return testing::RunProcess({testing::kBin, "loadgen", "--port", std::to_string(port), "--model",
                                "image", "--qps", "10", "--duration", "0.3", "--connections", "1",
                                "--wait-ready", "0", "--tls-ca", pki.Pem("other-ca"), "--json"});
  };
  testing::ProcessResult r = loadgen();
  EXPECT_NE(r.exit_code, 0) << "the first certificate is not the second CA's: " << r.out;
  EXPECT_TRUE(grpc_live("ca"));
  EXPECT_FALSE(grpc_live("other-ca"));

  install("other-server");
  serve.Signal(SIGHUP);
  ASSERT_TRUE(serve.WaitForStderr("SIGHUP: TLS certificate re-read", std::chrono::seconds(10)))
      << serve.err();
  r = loadgen();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out, nullptr, false).value("ok", 0), 0) << r.out;
  // The gRPC port too: gRPC picks up the new pair within a second of the signal (polled).
  bool rotated = false;
  for (int i = 0; i < 100 && !rotated; ++i) {
    rotated = grpc_live("other-ca");
    if (!rotated) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(rotated) << serve.err();
  EXPECT_FALSE(grpc_live("ca")) << "new gRPC connections still get the first certificate";

  // A broken file is reported and the process keeps the certificate it has.
  std::ofstream(cert) << "not a certificate\n";
  serve.Signal(SIGHUP);
  EXPECT_TRUE(serve.WaitForStderr("keeping the previous certificate", std::chrono::seconds(10)))
      << serve.err();
  r = loadgen();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(grpc_live("other-ca"));
}

}  // namespace
}  // namespace sloserve

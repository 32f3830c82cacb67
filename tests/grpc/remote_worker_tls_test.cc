// Mutual TLS between `sloserve serve` and `sloserve worker` processes on 127.0.0.1
// (docs/remote-workers.md "TLS"), with certificates made by the openssl CLI at test time:
// a worker with --tls-cert/--tls-key/--tls-client-ca serves a controller presenting a
// certificate its CA signed (server.worker_tls_*), and refuses one without TLS or with a
// certificate from another CA (serve then fails to start, naming the worker).
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "grpc/grpc_test_util.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/subprocess.h"
#include "support/test_pki.h"

namespace sloserve {
namespace {

using testing::Subprocess;

class RemoteWorkerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pki_.ok) << pki_.log;
    config_ = pki_.dir.File("remote.yaml");
    std::ofstream(config_) << "suite: ramsis-image\ntask: image\nhardware: n1-4cpu\nworkers: 1\n"
                              "slo_ms: 1000\nseed: 1\nexecutor: {latency: sample}\n"
                              "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                              "selection: fixed, variant: resnet18}\n"
                              "server: {input_shape: \"-1,16\"}\n";
    port_ = testing::FreeTcpPort();
    worker_ = std::make_unique<Subprocess>(std::vector<std::string>{
        testing::kBin, "worker", config_, "--listen", "127.0.0.1:" + std::to_string(port_),
        "--duration", "120", "--tls-cert", pki_.Pem("server"), "--tls-key", pki_.Key("server"),
        "--tls-client-ca", pki_.Pem("ca")});
    ASSERT_TRUE(worker_->WaitForStderr("listening on grpcs://", std::chrono::seconds(30)))
        << worker_->err();
  }
  // serve with the worker and `sets` (each --set KEY=VALUE).
  std::vector<std::string> ServeArgs(const std::vector<std::string>& sets) const {
    std::vector<std::string> args = {testing::kBin,
                                     "serve",
                                     config_,
                                     "--port",
                                     "0",
                                     "--remote-worker",
                                     "127.0.0.1:" + std::to_string(port_),
                                     "--duration",
                                     "60",
                                     "--set",
                                     "server.remote_connect_timeout_s=3"};
    for (const std::string& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    return args;
  }

  testing::TestPki pki_{"worker-tls"};
  std::string config_;
  uint16_t port_ = 0;
  std::unique_ptr<Subprocess> worker_;
};

TEST_F(RemoteWorkerTlsTest, ControllerWithTheRightCertificateServes) {
  Subprocess serve(ServeArgs({"server.worker_tls_ca_file=" + pki_.Pem("ca"),
                              "server.worker_tls_cert_file=" + pki_.Pem("client"),
                              "server.worker_tls_key_file=" + pki_.Key("client")}));
  ASSERT_TRUE(serve.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << serve.err();
  const uint16_t http_port = testing::ListenPort(serve.err());
  std::string data;
  for (int i = 0; i < 16; ++i) data += i ? ",1" : "1";
  const std::string body = testing::HttpPostBody(
      http_port, "/v2/models/image/infer",
      R"({"inputs":[{"name":"input","shape":[1,16],"datatype":"FP32","data":[)" + data + "]}]}");
  EXPECT_NE(body.find("\"worker\":\"w0\""), std::string::npos) << body << "\n" << serve.err();
}

TEST_F(RemoteWorkerTlsTest, PlaintextOrAnotherCasControllerRefused) {
  // Plaintext to a TLS worker: the health check never succeeds.
  testing::ProcessResult r = testing::RunProcess(ServeArgs({}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("127.0.0.1:" + std::to_string(port_)), std::string::npos) << r.err;
  // A client certificate from another CA: the worker refuses the handshake.
  r = testing::RunProcess(ServeArgs({"server.worker_tls_ca_file=" + pki_.Pem("ca"),
                                     "server.worker_tls_cert_file=" + pki_.Pem("other-client"),
                                     "server.worker_tls_key_file=" + pki_.Key("other-client")}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.find("sloserve: ready"), std::string::npos) << r.err;
  // Not trusting the worker's CA: the controller refuses it.
  r = testing::RunProcess(ServeArgs({"server.worker_tls_ca_file=" + pki_.Pem("other-ca"),
                                     "server.worker_tls_cert_file=" + pki_.Pem("client"),
                                     "server.worker_tls_key_file=" + pki_.Key("client")}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.find("sloserve: ready"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sloserve

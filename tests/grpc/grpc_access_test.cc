// Model control and the admin token on a real `sloserve serve --grpc-port` process
// (docs/serve.md "Security"): the config keys reach both frontends; load/unload are
// PERMISSION_DENIED by default; with model_control explicit and a token, control,
// statistics and (require_token_for_infer) inference need "authorization: Bearer <token>"
// metadata, else UNAUTHENTICATED; the HTTP port answers 401 with WWW-Authenticate, and
// `sloserve loadgen --token-file` sends the token.
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grpc/grpc_test_util.h"
#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

using inference::GRPCInferenceService;
using testing::Deadline;
using testing::Subprocess;

constexpr char kToken[] = "grpc-access-token-0123456789";

// `sloserve serve` for model "image" with `server_extra` in its server: section.
struct AccessServe {
  explicit AccessServe(const std::string& server_extra) {
    const std::string token = dir.File("token");
    std::ofstream(token) << kToken << "\n";
    const std::string config = dir.File("serve.yaml");
    std::ofstream(config) << "suite: ramsis-image\ntask: image\nhardware: n1-4cpu\nworkers: 1\n"
                             "slo_ms: 150\nseed: 1\nexecutor: {latency: sample}\n"
                             "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                             "selection: fixed, variant: efficientnet_b0}\n"
                             "server: {input_shape: \"-1,16\""
                          << server_extra << "}\n";
    grpc_port = testing::FreeTcpPort();
    process = std::make_unique<Subprocess>(std::vector<std::string>{
        testing::kBin, "serve", config, "--port", "0", "--grpc-port", std::to_string(grpc_port),
        "--duration", "120", "--set", "server.admin_token_file=" + token});
    ready = process->WaitForStderr("sloserve: ready", std::chrono::seconds(60));
    http_port = testing::ListenPort(process->err());
    stub = GRPCInferenceService::NewStub(testing::LocalChannel(grpc_port));
  }
  // A context with a deadline and, unless empty, "authorization: <value>".
  static std::unique_ptr<::grpc::ClientContext> Ctx(const std::string& authorization = "") {
    auto ctx = Deadline();
    if (!authorization.empty()) ctx->AddMetadata("authorization", authorization);
    return ctx;
  }
  ::grpc::Status Unload(const std::string& authorization = "") {
    inference::RepositoryModelUnloadRequest req;
    req.set_model_name("image");
    inference::RepositoryModelUnloadResponse resp;
    return stub->RepositoryModelUnload(Ctx(authorization).get(), req, &resp);
  }
  ::grpc::Status Load(const std::string& authorization = "") {
    inference::RepositoryModelLoadRequest req;
    req.set_model_name("image");
    inference::RepositoryModelLoadResponse resp;
    return stub->RepositoryModelLoad(Ctx(authorization).get(), req, &resp);
  }
  ::grpc::Status Infer(const std::string& authorization = "") {
    inference::ModelInferResponse resp;
    const auto meta = testing::ImageMetadata(stub.get());
    return stub->ModelInfer(Ctx(authorization).get(), testing::ImageRequest(meta, 1), &resp);
  }
  ::grpc::Status Stats(const std::string& authorization = "") {
    inference::ModelStatisticsRequest req;
    req.set_name("image");
    inference::ModelStatisticsResponse resp;
    return stub->ModelStatistics(Ctx(authorization).get(), req, &resp);
  }
  ::grpc::Status Index() {
    inference::RepositoryIndexRequest req;
    inference::RepositoryIndexResponse resp;
    return stub->RepositoryIndex(Ctx().get(), req, &resp);
  }

  testing::ScopedTempDir dir{"grpc-access"};
  uint16_t grpc_port = 0, http_port = 0;
  std::unique_ptr<Subprocess> process;
  bool ready = false;
  std::unique_ptr<GRPCInferenceService::Stub> stub;
};

TEST(GrpcAccessTest, ControlRefusedByDefault) {
  AccessServe s("");  // a token file, but model_control left at none
  ASSERT_TRUE(s.ready) << s.process->err();
  for (const ::grpc::Status& st :
       {s.Unload(), s.Load(), s.Unload(std::string("Bearer ") + kToken)}) {
    EXPECT_EQ(st.error_code(), ::grpc::StatusCode::PERMISSION_DENIED) << st.error_message();
    EXPECT_NE(st.error_message().find("server.model_control: explicit"), std::string::npos)
        << st.error_message();
  }
  EXPECT_TRUE(s.Index().ok());
  const ::grpc::Status infer = s.Infer();  // inference open by default
  EXPECT_TRUE(infer.ok()) << infer.error_message();
  // Statistics need the token once there is one.
  EXPECT_EQ(s.Stats().error_code(), ::grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(s.Stats(std::string("Bearer ") + kToken).ok());
  // HTTP: the same settings.
  const std::string unload = testing::HttpExchange(
      s.http_port, testing::HttpPostRequest("/v2/repository/models/image/unload", ""));
  EXPECT_EQ(unload.rfind("HTTP/1.0 403", 0), 0u) << unload;
}

TEST(GrpcAccessTest, ExplicitControlNeedsTheToken) {
  AccessServe s(", model_control: explicit, require_token_for_infer: true");
  ASSERT_TRUE(s.ready) << s.process->err();
  const std::string bearer = std::string("Bearer ") + kToken;
  EXPECT_EQ(s.Unload().error_code(), ::grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(s.Unload("Bearer grpc-access-token-012345678X").error_code(),
            ::grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(s.Infer().error_code(), ::grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(s.Infer("Bearer nope-nope-nope-nope").error_code(),
            ::grpc::StatusCode::UNAUTHENTICATED);
  ::grpc::Status st = s.Infer(bearer);
  EXPECT_TRUE(st.ok()) << st.error_message();
  st = s.Unload(bearer);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(s.Infer(bearer).error_code(), ::grpc::StatusCode::FAILED_PRECONDITION);  // unloaded
  st = s.Load(bearer);
  ASSERT_TRUE(st.ok()) << st.error_message();
  st = s.Infer(bearer);
  EXPECT_TRUE(st.ok()) << st.error_message();
  // HTTP: 401 with the challenge, the right token passes.
  const std::string infer = testing::HttpExchange(
      s.http_port, testing::HttpPostRequest("/v2/repository/models/image/unload", ""));
  EXPECT_EQ(infer.rfind("HTTP/1.0 401", 0), 0u) << infer;
  EXPECT_NE(infer.find("WWW-Authenticate: Bearer"), std::string::npos) << infer;
  const std::string with_token = testing::HttpExchange(
      s.http_port, "POST /v2/repository/models/image/load HTTP/1.0\r\nAuthorization: " + bearer +
                       "\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(with_token.rfind("HTTP/1.0 200", 0), 0u) << with_token;

  // loadgen --token-file: every request carries the token; without it every one is 401.
  const auto loadgen = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {
        testing::kBin,   "loadgen", "--port",  std::to_string(s.http_port),
        "--model",       "image",   "--qps",   "10",
        "--duration",    "0.5",     "--shape", "1,16",
        "--connections", "1",       "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const testing::ProcessResult r = testing::RunProcess(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  };
  nlohmann::json report = loadgen({});
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report.value("ok", -1), 0) << report.dump();
  EXPECT_GT(report["errors_by_status"].value("401", 0), 0) << report.dump();
  report = loadgen({"--token-file", s.dir.File("token")});
  ASSERT_TRUE(report.is_object());
  EXPECT_GT(report.value("ok", 0), 0) << report.dump();
  EXPECT_EQ(report["errors_by_status"].value("401", 0), 0) << report.dump();
}

TEST(GrpcAccessTest, BadSettingsRefusedAtStart) {
  testing::ScopedTempDir dir("grpc-access-bad");
  const std::string short_token = dir.File("short");
  std::ofstream(short_token) << "abc\n";
  // Each would serve for a second if it were accepted (exit code 0).
  const auto run = [](const std::string& set) {
    return testing::RunProcess(
        {testing::kBin, "serve", "--port", "0", "--duration", "1", "--set", set});
  };
  testing::ProcessResult r = run("server.admin_token_file=" + short_token);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("at least 16"), std::string::npos) << r.err;
  r = run("server.require_token_for_infer=true");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("server.admin_token_file"), std::string::npos) << r.err;
  r = run("server.model_control=implicit");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("none | explicit"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sloserve

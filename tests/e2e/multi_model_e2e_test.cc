// Many models served from one pool (issue 31 item 3) through real HTTP and gRPC servers on
// 127.0.0.1 in front of one engine: the model list, every model's metadata, readiness,
// configuration, statistics and inference, the repository extension's load and unload of
// one model while the other serves, per-model SLO checks, an unknown model answered with the
// closest served name, the request counters' model, variant and slo_class labels, and gRPC's
// unknown-parameter warnings (as HTTP's). The suite is testing::MultiModelSuite: "image"
// (img_fast 10 ms) and "text" (txt_only 200 ms) on one hardware type.
// sloserve's headers first: its thread annotations must be defined before gRPC's abseil
// ones (as in src/sloserve/grpc/grpc_server.cc).
#include "sloserve/grpc/grpc_server.h"
#include "sloserve/runtime/engine_runtime.h"
#include "sloserve/server/http_server.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "support/http_get.h"
#include "support/multi_model_suite.h"

namespace sloserve {
namespace {

using json = nlohmann::json;

struct HttpAnswer {
  int status = 0;
  json body;
};

HttpAnswer Exchange(uint16_t port, const std::string& request) {
  const std::string response = testing::HttpExchange(port, request);
  HttpAnswer a;
  if (response.size() > 12) a.status = std::atoi(response.substr(9, 3).c_str());
  const size_t at = response.find("\r\n\r\n");
  if (at != std::string::npos) a.body = json::parse(response.substr(at + 4), nullptr, false);
  return a;
}

HttpAnswer Get(uint16_t port, const std::string& target) {
  return Exchange(port, "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
}

HttpAnswer Post(uint16_t port, const std::string& target, const std::string& body) {
  return Exchange(port, testing::HttpPostRequest(target, body));
}

std::string InferBody(const std::string& parameters = "") {
  return R"({"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}])" +
         (parameters.empty() ? std::string() : ",\"parameters\":" + parameters) + "}";
}

inference::ModelInferRequest GrpcRequest(const std::string& model) {
  inference::ModelInferRequest req;
  req.set_model_name(model);
  auto* in = req.add_inputs();
  in->set_name("input");
  in->set_datatype("FP32");
  in->add_shape(1);
  in->add_shape(4);
  for (int i = 0; i < 4; ++i) in->mutable_contents()->add_fp32_contents(1.0f);
  return req;
}

std::unique_ptr<::grpc::ClientContext> Deadline() {
  auto ctx = std::make_unique<::grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return ctx;
}

// The sum of the /metrics samples whose line starts with `prefix`.
double SumOf(const std::string& metrics, const std::string& prefix) {
  double sum = 0;
  for (size_t at = metrics.find("\n" + prefix); at != std::string::npos;
       at = metrics.find("\n" + prefix, at + 1)) {
    const size_t end = metrics.find('\n', at + 1);
    const std::string line = metrics.substr(at + 1, end - at - 1);
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

// One engine behind both frontends, sharing their request metrics, model control on.
class MultiModelServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RuntimeOptions o;
    o.deployment.task = "image";
    o.deployment.workers = 2;
    o.policy.options["variant"] = "img_fast";
    o.model_slos = {{"text", Millis(300)}};
    o.service.time_scale = 0.05;  // batches hold their worker 1/20 of the profiled time
    auto rt = EngineRuntime::Create(&suite_, o);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    runtime_ = std::move(rt).value();
    runtime_->Start();
    auto metrics = std::make_shared<RequestMetrics>(runtime_->Tasks());
    HttpServer::Options h;
    h.host = "127.0.0.1";
    h.port = 0;
    h.request_metrics = metrics;
    h.access.model_control = ModelControl::kExplicit;
    auto http = HttpServer::Create(h, runtime_.get());
    ASSERT_TRUE(http.ok()) << http.status().ToString();
    http_ = std::move(http).value();
    auto http_port = http_->Start();
    ASSERT_TRUE(http_port.ok()) << http_port.status().ToString();
    port_ = *http_port;
    GrpcServer::Options g;
    g.port = 0;
    g.request_metrics = metrics;
    g.access.model_control = ModelControl::kExplicit;
    auto grpc = GrpcServer::Create(g, runtime_.get());
    ASSERT_TRUE(grpc.ok()) << grpc.status().ToString();
    grpc_ = std::move(grpc).value();
    auto grpc_port = grpc_->Start();
    ASSERT_TRUE(grpc_port.ok()) << grpc_port.status().ToString();
    stub_ = inference::GRPCInferenceService::NewStub(::grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(*grpc_port), ::grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (runtime_) runtime_->Stop(Seconds(1));
    if (grpc_) grpc_->Stop();
    if (http_) http_->Stop();
  }

  ::grpc::Status Infer(const inference::ModelInferRequest& req,
                       inference::ModelInferResponse* resp) {
    return stub_->ModelInfer(Deadline().get(), req, resp);
  }

  const ProfileSuite suite_ = testing::MultiModelSuite();
  std::unique_ptr<EngineRuntime> runtime_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<GrpcServer> grpc_;
  uint16_t port_ = 0;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

TEST_F(MultiModelServeTest, EveryModelsEndpointsAnswerOverHttp) {
  const HttpAnswer list = Get(port_, "/v2/models");
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.body["models"].size(), 2u) << list.body;
  EXPECT_EQ(list.body["models"][0]["name"], "image");
  EXPECT_EQ(list.body["models"][0]["state"], "READY");
  EXPECT_EQ(list.body["models"][0]["default_slo_ms"], 100.0);
  EXPECT_EQ(list.body["models"][1]["name"], "text");
  EXPECT_EQ(list.body["models"][1]["default_slo_ms"], 300.0);
  EXPECT_EQ(list.body["models"][1]["max_batch_size"], 8);
  EXPECT_EQ(Post(port_, "/v2/models", "").status, 405);
  const std::map<std::string, std::string> variant = {{"image", "img_fast"}, {"text", "txt_only"}};
  for (const auto& [model, answering] : variant) {
    SCOPED_TRACE(model);
    const HttpAnswer meta = Get(port_, "/v2/models/" + model);
    ASSERT_EQ(meta.status, 200);
    EXPECT_EQ(meta.body["name"], model);
    EXPECT_EQ(Get(port_, "/v2/models/" + model + "/ready").status, 200);
    const HttpAnswer config = Get(port_, "/v2/models/" + model + "/config");
    ASSERT_EQ(config.status, 200);
    EXPECT_EQ(config.body["name"], model);
    const HttpAnswer out = Post(port_, "/v2/models/" + model + "/infer", InferBody());
    ASSERT_EQ(out.status, 200) << out.body;
    EXPECT_EQ(out.body["model_name"], model);
    EXPECT_EQ(out.body["parameters"]["variant"], answering);
    const HttpAnswer stats = Get(port_, "/v2/models/" + model + "/stats");
    ASSERT_EQ(stats.status, 200);
    ASSERT_EQ(stats.body["model_stats"].size(), 1u);
    EXPECT_EQ(stats.body["model_stats"][0]["name"], model);
    EXPECT_EQ(stats.body["model_stats"][0]["inference_count"], 1);
  }
  // Each model's own fastest latency bounds its slo_ms.
  const HttpAnswer below = Post(port_, "/v2/models/text/infer", InferBody(R"({"slo_ms":100})"));
  EXPECT_EQ(below.status, 400);
  EXPECT_NE(below.body["error"].get<std::string>().find(
                "below the fastest achievable latency 200.000 ms of model 'text'"),
            std::string::npos)
      << below.body;
  EXPECT_EQ(Post(port_, "/v2/models/image/infer", InferBody(R"({"slo_ms":100})")).status, 200);
  // An unknown model: 404 naming the closest served one, on every endpoint.
  for (const char* target : {"/v2/models/txet", "/v2/models/txet/ready"}) {
    const HttpAnswer unknown = Get(port_, target);
    EXPECT_EQ(unknown.status, 404);
    EXPECT_EQ(unknown.body["error"],
              "unknown model 'txet' (did you mean 'text'? served: image, text)");
  }
  const HttpAnswer unknown_infer = Post(port_, "/v2/models/imag/infer", InferBody());
  EXPECT_EQ(unknown_infer.status, 404);
  EXPECT_NE(unknown_infer.body["error"].get<std::string>().find("did you mean 'image'?"),
            std::string::npos);
  EXPECT_EQ(Post(port_, "/v2/repository/models/tex/unload", "").status, 404);

  // The request counters: per model, with the answering variant and the SLO class.
  const std::string m = testing::HttpGetBody(port_, "/metrics");
  EXPECT_EQ(SumOf(m,
                  "sloserve_requests_total{model=\"text\",outcome=\"met\",reason=\"none\","
                  "variant=\"txt_only\",slo_class=\"300\"}") +
                SumOf(m,
                      "sloserve_requests_total{model=\"text\",outcome=\"late\",reason=\"late\","
                      "variant=\"txt_only\",slo_class=\"300\"}"),
            1)
      << m;
  EXPECT_EQ(SumOf(m, "sloserve_requests_total{model=\"image\",outcome=\"met\"") +
                SumOf(m, "sloserve_requests_total{model=\"image\",outcome=\"late\""),
            2);
  EXPECT_EQ(SumOf(m, "sloserve_requests_total{model=\"text\",outcome=\"invalid\""), 1);
  EXPECT_NE(m.find("sloserve_request_duration_seconds_count{model=\"text\",variant=\"txt_only\""),
            std::string::npos);
  EXPECT_NE(m.find("sloserve_variant_accuracy_ratio{model=\"text\",variant=\"txt_only\"} 0.9"),
            std::string::npos);
}

TEST_F(MultiModelServeTest, OneModelIsUnloadedWhileTheOtherServes) {
  const HttpAnswer unload = Post(port_, "/v2/repository/models/text/unload", "");
  ASSERT_EQ(unload.status, 200) << unload.body;
  EXPECT_EQ(unload.body["state"], "UNAVAILABLE");
  EXPECT_EQ(Post(port_, "/v2/models/text/infer", InferBody()).status, 400);
  EXPECT_EQ(Get(port_, "/v2/models/text/ready").status, 400);
  EXPECT_EQ(Post(port_, "/v2/models/image/infer", InferBody()).status, 200);
  EXPECT_EQ(Get(port_, "/v2/models/image/ready").status, 200);
  // A repository call is no inference: the in-flight gauge is back at 0 (it went to -1 per
  // load or unload).
  EXPECT_NE(testing::HttpGetBody(port_, "/metrics").find("\nsloserve_http_infer_in_flight 0\n"),
            std::string::npos);
  const HttpAnswer list = Get(port_, "/v2/models");
  EXPECT_EQ(list.body["models"][0]["state"], "READY");
  EXPECT_EQ(list.body["models"][1]["state"], "UNAVAILABLE");
  // Over gRPC: image unloaded, text loaded again; each model's readiness follows.
  {
    inference::RepositoryModelUnloadRequest req;
    req.set_model_name("image");
    inference::RepositoryModelUnloadResponse resp;
    ASSERT_TRUE(stub_->RepositoryModelUnload(Deadline().get(), req, &resp).ok());
  }
  {
    inference::RepositoryModelLoadRequest req;
    req.set_model_name("text");
    inference::RepositoryModelLoadResponse resp;
    ASSERT_TRUE(stub_->RepositoryModelLoad(Deadline().get(), req, &resp).ok());
  }
  inference::RepositoryIndexRequest index_req;
  inference::RepositoryIndexResponse index;
  ASSERT_TRUE(stub_->RepositoryIndex(Deadline().get(), index_req, &index).ok());
  ASSERT_EQ(index.models_size(), 2);
  EXPECT_EQ(index.models(0).name(), "image");
  EXPECT_EQ(index.models(0).state(), "UNAVAILABLE");
  EXPECT_EQ(index.models(1).name(), "text");
  EXPECT_EQ(index.models(1).state(), "READY");
  inference::ModelInferResponse resp;
  EXPECT_EQ(Infer(GrpcRequest("image"), &resp).error_code(),
            ::grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(Infer(GrpcRequest("text"), &resp).ok());
  EXPECT_EQ(resp.model_name(), "text");
}

TEST_F(MultiModelServeTest, EveryModelsEndpointsAnswerOverGrpc) {
  for (const char* model : {"image", "text"}) {
    SCOPED_TRACE(model);
    inference::ModelMetadataRequest meta_req;
    meta_req.set_name(model);
    inference::ModelMetadataResponse meta;
    ASSERT_TRUE(stub_->ModelMetadata(Deadline().get(), meta_req, &meta).ok());
    EXPECT_EQ(meta.name(), model);
    inference::ModelReadyRequest ready_req;
    ready_req.set_name(model);
    inference::ModelReadyResponse ready;
    ASSERT_TRUE(stub_->ModelReady(Deadline().get(), ready_req, &ready).ok());
    EXPECT_TRUE(ready.ready());
    inference::ModelInferResponse resp;
    ASSERT_TRUE(Infer(GrpcRequest(model), &resp).ok());
    EXPECT_EQ(resp.model_name(), model);
    // No unknown parameters, no warnings.
    EXPECT_EQ(resp.parameters().count("warnings"), 0u);
    inference::ModelStatisticsRequest stats_req;
    stats_req.set_name(model);
    inference::ModelStatisticsResponse stats;
    ASSERT_TRUE(stub_->ModelStatistics(Deadline().get(), stats_req, &stats).ok());
    ASSERT_EQ(stats.model_stats_size(), 1);
    EXPECT_EQ(stats.model_stats(0).name(), model);
    EXPECT_EQ(stats.model_stats(0).inference_count(), 1u);
  }
  inference::ModelInferResponse resp;
  const ::grpc::Status unknown = Infer(GrpcRequest("txet"), &resp);
  EXPECT_EQ(unknown.error_code(), ::grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(unknown.error_message(),
            "unknown model 'txet' (did you mean 'text'? served: image, text)");
  inference::ModelMetadataRequest meta_req;
  meta_req.set_name("imag");
  inference::ModelMetadataResponse meta;
  EXPECT_EQ(stub_->ModelMetadata(Deadline().get(), meta_req, &meta).error_code(),
            ::grpc::StatusCode::NOT_FOUND);
  // text's own fastest latency bounds its slo_ms over gRPC too.
  inference::ModelInferRequest below = GrpcRequest("text");
  (*below.mutable_parameters())["slo_ms"].set_double_param(100);
  const ::grpc::Status refused = Infer(below, &resp);
  EXPECT_EQ(refused.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("200.000 ms of model 'text'"), std::string::npos);
}

// Unknown request parameters are reported over gRPC with HTTP's wording (issue 36), in the
// response's parameters["warnings"], in key order, joined by "; ".
TEST_F(MultiModelServeTest, GrpcReportsUnknownParametersAsHttpDoes) {
  inference::ModelInferRequest req = GrpcRequest("text");
  (*req.mutable_parameters())["slo"].set_double_param(300);
  (*req.mutable_parameters())["colour"].set_string_param("blue");
  (*req.mutable_parameters())["slo_ms"].set_double_param(300);
  inference::ModelInferResponse resp;
  ASSERT_TRUE(Infer(req, &resp).ok());
  ASSERT_EQ(resp.parameters().count("warnings"), 1u);
  const std::string grpc_warnings = resp.parameters().at("warnings").string_param();
  EXPECT_EQ(grpc_warnings,
            "unknown parameter 'colour' ignored (known: slo_ms, app, priority, "
            "binary_data_output); unknown parameter 'slo' ignored (did you mean 'slo_ms'?)");
  const HttpAnswer http = Post(port_, "/v2/models/text/infer",
                               InferBody(R"({"slo":300,"colour":"blue","slo_ms":300})"));
  ASSERT_EQ(http.status, 200) << http.body;
  ASSERT_EQ(http.body["warnings"].size(), 2u);
  EXPECT_EQ(http.body["warnings"][0].get<std::string>() + "; " +
                http.body["warnings"][1].get<std::string>(),
            grpc_warnings);
}

}  // namespace
}  // namespace sloserve

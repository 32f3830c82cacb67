// Multi-row (batched) requests under every selection and batching policy the registry
// knows, through real HTTP and gRPC servers on 127.0.0.1 in front of one engine
// (docs/protocol.md, "Batched requests"). The suite is testing::SmallSuite(16) at its
// 100 ms SLO: "fast" takes 16 rows within it, the more accurate "slow" only 15, so the
// model serves at most 16 rows (max_batch_size) and a 16-row request is "fast"'s.
// sloserve's headers first: its thread annotations must be defined before gRPC's abseil
// ones (as in src/sloserve/grpc/grpc_server.cc).
#include "sloserve/grpc/grpc_server.h"
#include "sloserve/policy/registry.h"
#include "sloserve/runtime/engine_runtime.h"
#include "sloserve/server/http_server.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "sloserve/policy/selection/response_latency_table.h"
#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "support/http_get.h"
#include "support/temp_dir.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

using json = nlohmann::json;

constexpr int kMaxRows = 16;

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

std::string InferBody(int rows) {
  json data = json::array();
  for (int i = 0; i < rows * 4; ++i) data.push_back(1.0);
  return json{
      {"inputs", {{{"name", "input"}, {"datatype", "FP32"}, {"shape", {rows, 4}}, {"data", data}}}}}
      .dump();
}

inference::ModelInferRequest GrpcRequest(int rows) {
  inference::ModelInferRequest req;
  req.set_model_name("t");
  auto* in = req.add_inputs();
  in->set_name("input");
  in->set_datatype("FP32");
  in->add_shape(rows);
  in->add_shape(4);
  for (int i = 0; i < rows * 4; ++i) in->mutable_contents()->add_fp32_contents(1.0f);
  return req;
}

// One engine behind both frontends, with the named selection and batching policies.
class Served {
 public:
  Served(const ProfileSuite* suite, const std::string& selection, const std::string& batching,
         const std::string& table = "") {
    RuntimeOptions o;
    o.deployment.workers = 2;
    o.policy.selection = selection;
    o.policy.batching = batching;
    // RAMSIS: one MDP policy for a fixed load, small enough to solve at once (options
    // only RAMSIS takes: given to another selection policy they would be refused).
    if (selection == "ramsis") {
      o.policy.options["load_qps"] = "5";
      o.policy.options["max_queue"] = "8";
    }
    if (selection == "model_switching") o.policy.options["table"] = table;  // its p99s
    o.service.time_scale = 0.05;  // batches hold their worker 1/20 of the profiled time
    o.input_shape = {-1, 4};
    auto rt = EngineRuntime::Create(suite, o);
    EXPECT_TRUE(rt.ok()) << rt.status().ToString();
    if (!rt.ok()) return;
    runtime_ = std::move(rt).value();
    runtime_->Start();
    HttpServer::Options h;
    h.host = "127.0.0.1";
    h.port = 0;
    auto http = HttpServer::Create(h, runtime_.get());
    EXPECT_TRUE(http.ok()) << http.status().ToString();
    if (!http.ok()) return;
    http_ = std::move(http).value();
    auto http_port = http_->Start();
    EXPECT_TRUE(http_port.ok()) << http_port.status().ToString();
    http_port_ = http_port.ok() ? *http_port : 0;
    GrpcServer::Options g;
    g.port = 0;
    auto grpc = GrpcServer::Create(g, runtime_.get());
    EXPECT_TRUE(grpc.ok()) << grpc.status().ToString();
    if (!grpc.ok()) return;
    grpc_ = std::move(grpc).value();
    auto grpc_port = grpc_->Start();
    EXPECT_TRUE(grpc_port.ok()) << grpc_port.status().ToString();
    if (!grpc_port.ok()) return;
    stub_ = inference::GRPCInferenceService::NewStub(::grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(*grpc_port), ::grpc::InsecureChannelCredentials()));
  }
  ~Served() {
    if (runtime_) runtime_->Stop(Seconds(1));
    if (grpc_) grpc_->Stop();
    if (http_) http_->Stop();
  }
  bool up() const { return stub_ != nullptr; }
  uint16_t http_port() const { return http_port_; }
  inference::GRPCInferenceService::Stub* stub() const { return stub_.get(); }
  EngineRuntime& runtime() { return *runtime_; }

 private:
  std::unique_ptr<EngineRuntime> runtime_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<GrpcServer> grpc_;
  uint16_t http_port_ = 0;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

// 1, 2, 8, 16 and 17 rows over HTTP and gRPC to one server with these policies (a
// function, so that a fatal failure ends only this combination).
void CheckRows(const ProfileSuite& suite, const std::string& selection, const std::string& batching,
               const std::string& table) {
  SCOPED_TRACE("selection " + selection + ", batching " + batching);
  Served served(&suite, selection, batching, table);
  ASSERT_TRUE(served.up());
  for (int rows : {1, 2, 8, kMaxRows, kMaxRows + 1}) {
    SCOPED_TRACE(std::to_string(rows) + " rows");
    const HttpAnswer http = Exchange(
        served.http_port(), testing::HttpPostRequest("/v2/models/t/infer", InferBody(rows)));
    inference::ModelInferResponse resp;
    auto ctx = std::make_unique<::grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    const ::grpc::Status grpc = served.stub()->ModelInfer(ctx.get(), GrpcRequest(rows), &resp);
    if (rows > kMaxRows) {
      EXPECT_EQ(http.status, 400) << http.body.dump();
      EXPECT_NE(http.body.value("error", "").find("at most 16 rows"), std::string::npos)
          << http.body.dump();
      EXPECT_EQ(grpc.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
      EXPECT_NE(grpc.error_message().find("at most 16 rows"), std::string::npos)
          << grpc.error_message();
      continue;
    }
    EXPECT_EQ(http.status, 200) << http.body.dump();
    if (http.status == 200) {
      EXPECT_EQ(http.body["outputs"][0]["shape"], json::array({rows, 1}));
      EXPECT_GE(http.body["parameters"]["batch_size"].get<int>(), 1);
      if (rows == kMaxRows) {
        EXPECT_EQ(http.body["parameters"]["variant"], "fast");
      }
    }
    EXPECT_TRUE(grpc.ok()) << grpc.error_message();
    if (grpc.ok()) {
      ASSERT_EQ(resp.outputs_size(), 1);
      ASSERT_EQ(resp.outputs(0).shape_size(), 2);
      EXPECT_EQ(resp.outputs(0).shape(0), rows);
      EXPECT_EQ(resp.outputs(0).shape(1), 1);
      // Only "fast" takes 16 rows within the SLO.
      if (rows == kMaxRows) {
        EXPECT_EQ(resp.parameters().at("variant").string_param(), "fast");
      }
    }
  }
  // The refused requests are bad requests, not arrivals that missed their SLO.
  const MetricsSummary summary = served.runtime().Summary();
  EXPECT_EQ(summary.bad_requests, 2);
  EXPECT_EQ(summary.arrived, 8);
  EXPECT_EQ(summary.dropped, 0);
}

TEST(MultiRowE2eTest, EveryPolicyServesUpToMaxBatchSizeRowsAndRefusesMore) {
  const ProfileSuite suite = testing::SmallSuite(kMaxRows);
  // model_switching reads measured p99s under load: both variants meet the SLO.
  const testing::ScopedTempDir temp("multi-row");
  const std::string table = temp.File("ms_table.csv");
  {
    std::ofstream out(table);
    out << ResponseLatencyTable::Header() << "\n"
        << "slow,2,100,100,60,0\nfast,2,100,100,20,0\n";
  }
  // Every registered policy (a new one is tested without a change here).
  const PolicyRegistry& registry = PolicyRegistry::Builtin();
  ASSERT_GE(registry.SelectionPolicies().size(), 4u);
  ASSERT_GE(registry.BatchingPolicies().size(), 7u);
  for (const PolicyInfo& selection : registry.SelectionPolicies()) {
    for (const PolicyInfo& batching : registry.BatchingPolicies()) {
      CheckRows(suite, selection.name, batching.name, table);
    }
  }
}

TEST(MultiRowE2eTest, MetadataAndConfigStateMaxBatchSize) {
  const ProfileSuite suite = testing::SmallSuite(kMaxRows);
  Served served(&suite, "fixed", "edf");
  ASSERT_TRUE(served.up());
  const json meta = json::parse(testing::HttpGetBody(served.http_port(), "/v2/models/t"));
  EXPECT_EQ(meta["inputs"][0]["shape"], json::array({-1, 4}));
  EXPECT_EQ(meta["parameters"]["max_batch_size"], kMaxRows);
  // Triton's model config, as tritonclient's get_model_config and perf_analyzer read it:
  // dims without the batch dimension.
  const json config = json::parse(testing::HttpGetBody(served.http_port(), "/v2/models/t/config"));
  EXPECT_EQ(config["name"], "t");
  EXPECT_EQ(config["max_batch_size"], kMaxRows);
  EXPECT_EQ(config["input"][0]["name"], "input");
  EXPECT_EQ(config["input"][0]["data_type"], "TYPE_FP32");
  EXPECT_EQ(config["input"][0]["dims"], json::array({4}));
  EXPECT_EQ(config["output"][0]["dims"], json::array({1}));
  const HttpAnswer post =
      Exchange(served.http_port(), testing::HttpPostRequest("/v2/models/t/config", "{}"));
  EXPECT_EQ(post.status, 405);
}

}  // namespace
}  // namespace sloserve

// KServeHandler and ParseInferRequest without sockets.
#include "sloserve/server/kserve_handler.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/fake_backend.h"

namespace sloserve {
namespace {

using json = nlohmann::json;

TaskInfo TextTask() {
  TaskInfo t;
  t.name = "text";
  t.variants = {"bert-tiny"};
  t.input_name = "tokens";
  t.input_datatype = "INT64";
  t.input_shape = {-1, -1};
  t.default_slo = Millis(250);
  t.apps = {"chat", "search"};
  return t;
}

std::string TextBody(const std::string& params) {
  return R"({"inputs":[{"name":"tokens","shape":[2,2],"datatype":"INT64","data":[1,2,3,4]}])" +
         params + "}";
}

TEST(KServeHandlerTest, ParsesAValidRequest) {
  auto call = ParseInferRequest(
      TextTask(), TextBody(R"(,"parameters":{"slo_ms":12.5,"app":"chat"})"), Seconds(10));
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  EXPECT_EQ(call->request.task, "text");
  EXPECT_EQ(call->request.rows, 2);
  EXPECT_EQ(call->request.slo, Micros(12500));
  EXPECT_EQ(call->request.app, "chat");
  EXPECT_FALSE(call->has_id);
}

TEST(KServeHandlerTest, DefaultsAndLimits) {
  const TaskInfo task = TextTask();
  auto call = ParseInferRequest(task, TextBody(""), Seconds(10));
  ASSERT_TRUE(call.ok());
  EXPECT_EQ(call->request.slo, Millis(250));
  EXPECT_EQ(call->request.app, "");
  // exactly max_slo is fine, above is not
  EXPECT_TRUE(
      ParseInferRequest(task, TextBody(R"(,"parameters":{"slo_ms":10000})"), Seconds(10)).ok());
  EXPECT_FALSE(
      ParseInferRequest(task, TextBody(R"(,"parameters":{"slo_ms":10000.5})"), Seconds(10)).ok());
  // apps are checked when the task declares them
  auto bad_app = ParseInferRequest(task, TextBody(R"(,"parameters":{"app":"other"})"), Seconds(10));
  EXPECT_EQ(bad_app.status().code(), StatusCode::kInvalidArgument);
  // integer datatypes need integers
  EXPECT_FALSE(
      ParseInferRequest(
          task, R"({"inputs":[{"name":"tokens","shape":[1,2],"datatype":"INT64","data":[1,2.5]}]})",
          Seconds(10))
          .ok());
  // deeply nested data is rejected, not a stack overflow
  std::string deep = R"({"inputs":[{"name":"tokens","shape":[1,1],"datatype":"INT64","data":)";
  deep += std::string(100000, '[') + "1" + std::string(100000, ']') + "}]}";
  EXPECT_FALSE(ParseInferRequest(task, deep, Seconds(10)).ok());
  // shape overflow
  EXPECT_FALSE(
      ParseInferRequest(
          task,
          R"({"inputs":[{"name":"tokens","shape":[4000000000,4000000000],"datatype":"INT64","data":[]}]})",
          Seconds(10))
          .ok());
}

TEST(KServeHandlerTest, StatusCodeMapping) {
  EXPECT_EQ(HttpStatusFromCode(StatusCode::kOk), 200);
  EXPECT_EQ(HttpStatusFromCode(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFromCode(StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFromCode(StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusFromCode(StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFromCode(StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusFromCode(StatusCode::kUnimplemented), 501);
  EXPECT_EQ(HttpStatusFromCode(StatusCode::kInternal), 500);
}

TEST(KServeHandlerTest, RoutesAndRendersOutcome) {
  FakeBackend backend;
  ServerMetrics metrics;
  KServeHandler handler({}, {TextTask()}, &backend, &metrics);
  auto routed = handler.Route(
      HttpMethod::kPost, "/v2/models/text/infer",
      R"({"id":"q\"1","inputs":[{"name":"tokens","shape":[3,1],"datatype":"INT64","data":[1,2,3]}]})");
  ASSERT_TRUE(std::holds_alternative<InferCall>(routed));
  const InferCall& call = std::get<InferCall>(routed);
  InferOutcome outcome;
  outcome.variant = "bert-tiny";
  outcome.worker = "w\n7";
  outcome.queue_time = Micros(1500);
  outcome.compute_time = Micros(2500);
  outcome.batch_size = 8;
  outcome.met_slo = false;
  const HttpResponse r = handler.RenderOutcome(call, outcome);
  ASSERT_EQ(r.status, 200);
  const json j = json::parse(r.body);
  EXPECT_EQ(j["id"], "q\"1");
  EXPECT_EQ(j["model_version"], "bert-tiny");
  EXPECT_EQ(j["outputs"][0]["shape"], json({3, 1}));
  EXPECT_EQ(j["outputs"][0]["data"], json({0.0, 0.0, 0.0}));
  EXPECT_EQ(j["parameters"]["worker"], "w\n7");
  EXPECT_EQ(j["parameters"]["queue_us"], 1500);
  EXPECT_EQ(j["parameters"]["compute_us"], 2500);
  EXPECT_EQ(j["parameters"]["batch_size"], 8);
  EXPECT_EQ(j["parameters"]["met_slo"], false);
  EXPECT_FALSE(j["parameters"].contains("hardware"));  // not reported: not rendered
  outcome.hardware = "g4dn.xlarge";
  EXPECT_EQ(json::parse(handler.RenderOutcome(call, outcome).body)["parameters"]["hardware"],
            "g4dn.xlarge");

  outcome.status = ResourceExhaustedError("admission queue full");
  const HttpResponse err = handler.RenderOutcome(call, outcome);
  EXPECT_EQ(err.status, 429);
  EXPECT_EQ(json::parse(err.body)["error"], "admission queue full");

  auto metadata = handler.Route(HttpMethod::kGet, "/v2/models/text", "");
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(metadata));
  EXPECT_EQ(json::parse(std::get<HttpResponse>(metadata).body)["inputs"][0]["datatype"], "INT64");
}

}  // namespace
}  // namespace sloserve

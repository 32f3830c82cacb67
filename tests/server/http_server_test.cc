// Endpoints and request validation of the HTTP frontend, over real sockets.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/server_fixture.h"

namespace sloserve {
namespace {

using json = nlohmann::json;

class HttpServerTest : public ServerFixture {
 protected:
  void SetUp() override { StartServer(); }

  // POSTs `body` to the image task and expects `status` with a KServe error body.
  void ExpectInferError(const std::string& body, int status,
                        const std::string& target = "/v2/models/image/infer") {
    const TestResponse r = Post(target, body);
    EXPECT_EQ(r.status, status) << body << " -> " << r.body;
    const json j = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.body;
    EXPECT_TRUE(j.contains("error") && j["error"].is_string()) << r.body;
  }
};

TEST_F(HttpServerTest, HealthEndpoints) {
  EXPECT_EQ(Get("/v2/health/live").status, 200);
  EXPECT_EQ(Get("/v2/health/ready").status, 200);
  backend_->SetReady(false);
  // The KServe v2 health API: "a 4xx status code indicates false" (400, as Triton).
  EXPECT_EQ(Get("/v2/health/ready").status, 400);
  EXPECT_EQ(Get("/v2/health/live").status, 200);
  EXPECT_EQ(Get("/v2/models/image/ready").status, 400);
  backend_->SetReady(true);
  EXPECT_EQ(Get("/v2/models/image/ready").status, 200);
}

TEST_F(HttpServerTest, ServerMetadata) {
  const TestResponse r = Get("/v2");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  const json j = json::parse(r.body);
  EXPECT_EQ(j["name"], "sloserve");
  EXPECT_TRUE(j["version"].is_string());
  EXPECT_TRUE(j["extensions"].is_array());
}

TEST_F(HttpServerTest, ModelMetadata) {
  const TestResponse r = Get("/v2/models/image");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["name"], "image");
  EXPECT_EQ(j["platform"], "sloserve");
  // Variants are not addressable versions (docs/protocol.md "Versions").
  EXPECT_FALSE(j.contains("versions"));
  EXPECT_EQ(j["parameters"]["variants"], json({"resnet18", "resnet50"}));
  EXPECT_EQ(j["inputs"][0]["name"], "input");
  EXPECT_EQ(j["inputs"][0]["datatype"], "FP32");
  EXPECT_EQ(j["inputs"][0]["shape"], json({-1, 3}));
  EXPECT_EQ(j["outputs"][0]["name"], "output");

  EXPECT_EQ(Get("/v2/models/nope").status, 404);
  EXPECT_EQ(Get("/v2/models/nope/ready").status, 404);
  EXPECT_EQ(Get("/v2/models/image/versions/resnet50").status, 404);
  EXPECT_EQ(Get("/v2/models/image/versions/resnet50/ready").status, 404);
}

// Triton's model config (GET /v2/models/{m}/config, docs/protocol.md): with a row limit
// and a leading batch dimension, max_batch_size states it and dims leave that dimension
// out; without a limit, max_batch_size is 0 and dims are the whole shape.
class ModelConfigTest : public ServerFixture {};

TEST_F(ModelConfigTest, ModelConfigIsTritons) {
  FakeBackend::Options options;
  TaskInfo limited = FakeImageTask();
  limited.name = "limited";
  limited.max_batch_size = 12;
  TaskInfo bytes = FakeImageTask();
  bytes.name = "bytes";
  bytes.input_datatype = "BYTES";
  options.tasks = {FakeImageTask(), limited, bytes};
  StartServer(options);
  json j = json::parse(Get("/v2/models/limited/config").body);
  EXPECT_EQ(j["name"], "limited");
  EXPECT_EQ(j["max_batch_size"], 12);
  EXPECT_EQ(j["input"], json::parse(R"([{"name":"input","data_type":"TYPE_FP32","dims":[3]}])"));
  EXPECT_EQ(j["output"], json::parse(R"([{"name":"output","data_type":"TYPE_FP32","dims":[1]}])"));
  EXPECT_EQ(json::parse(Get("/v2/models/limited").body)["parameters"]["max_batch_size"], 12);
  j = json::parse(Get("/v2/models/image/config").body);
  EXPECT_EQ(j["max_batch_size"], 0);
  EXPECT_EQ(j["input"][0]["dims"], json({-1, 3}));
  EXPECT_FALSE(json::parse(Get("/v2/models/image").body)["parameters"].contains("max_batch_size"));
  EXPECT_EQ(json::parse(Get("/v2/models/bytes/config").body)["input"][0]["data_type"],
            "TYPE_STRING");
  EXPECT_EQ(Get("/v2/models/nope/config").status, 404);
  EXPECT_EQ(Post("/v2/models/image/config", "{}").status, 405);
}

TEST_F(HttpServerTest, InferSucceeds) {
  const TestResponse r =
      Post("/v2/models/image/infer", InferBody(2, R"(,"parameters":{"slo_ms":50,"app":"a1"})"));
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["model_name"], "image");
  EXPECT_FALSE(j.contains("model_version"));
  EXPECT_EQ(j["id"], "r1");
  EXPECT_EQ(j["outputs"][0]["name"], "output");
  EXPECT_EQ(j["outputs"][0]["datatype"], "FP32");
  EXPECT_EQ(j["outputs"][0]["shape"], json({2, 1}));
  EXPECT_EQ(j["outputs"][0]["data"].size(), 2u);
  EXPECT_EQ(j["parameters"]["variant"], "resnet18");
  EXPECT_EQ(j["parameters"]["worker"], "w0");
  EXPECT_EQ(j["parameters"]["queue_us"], 10);
  EXPECT_EQ(j["parameters"]["batch_size"], 2);
  EXPECT_EQ(j["parameters"]["met_slo"], true);

  const InferRequest seen = backend_->last_request();
  EXPECT_EQ(seen.task, "image");
  EXPECT_EQ(seen.app, "a1");
  EXPECT_EQ(seen.rows, 2);
  EXPECT_EQ(seen.slo, Millis(50));
}

TEST_F(HttpServerTest, InferUsesTaskDefaultSlo) {
  ASSERT_EQ(Post("/v2/models/image/infer", InferBody(1)).status, 200);
  EXPECT_EQ(backend_->last_request().slo, Millis(100));
  EXPECT_EQ(backend_->last_request().app, "");
}

// Triton's `priority` parameter: 0 = the default level, 1..levels; anything else is a
// 400 that names the parameter and the range.
class HttpServerPriorityTest : public ServerFixture {
 protected:
  void SetUp() override {
    FakeBackend::Options options;
    options.tasks[0].priority_levels = 3;
    StartServer(options);
  }
};

TEST_F(HttpServerPriorityTest, AcceptedInRangeAndRefusedOutside) {
  for (int p : {0, 1, 3}) {
    const TestResponse r =
        Post("/v2/models/image/infer",
             InferBody(1, R"(,"parameters":{"priority":)" + std::to_string(p) + "}"));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(backend_->last_request().priority, p);
  }
  const int submitted = backend_->submitted();
  for (const char* bad : {"4", "-1", "1.5", "\"1\"", "true", "18446744073709551615"}) {
    const TestResponse r =
        Post("/v2/models/image/infer",
             InferBody(1, std::string(R"(,"parameters":{"priority":)") + bad + "}"));
    EXPECT_EQ(r.status, 400) << bad << " -> " << r.body;
    const json j = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error")) << r.body;
    EXPECT_NE(j["error"].get<std::string>().find("parameter 'priority' must be an integer"),
              std::string::npos)
        << bad << " -> " << r.body;
  }
  const TestResponse range =
      Post("/v2/models/image/infer", InferBody(1, R"(,"parameters":{"priority":4})"));
  EXPECT_NE(range.body.find("in [0, 3]"), std::string::npos) << range.body;
  EXPECT_EQ(backend_->submitted(), submitted);
}

// Issue 37: a client's names are echoed at most 128 bytes long (then "…(N bytes)"), so
// an error stays small whatever was sent (a 100 kB name was echoed whole).
TEST_F(HttpServerTest, LongNamesAreEchoedCut) {
  // The repository paths below are model control, refused (403) before any name is read
  // unless it is enabled (docs/serve.md "Security").
  server_->Stop();
  HttpServer::Options options;
  options.access.model_control = ModelControl::kExplicit;
  StartServer({}, options);
  const std::string model(5'000, 'm'), name(100'000, 'n');
  auto expect_cut = [](const TestResponse& r, int status, size_t length) {
    EXPECT_EQ(r.status, status) << r.body.substr(0, 300);
    const json j = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j["error"].is_string()) << r.body.substr(0, 300);
    const std::string error = j["error"];
    EXPECT_LT(error.size(), 400u) << error.substr(0, 300);
    EXPECT_NE(error.find("\xE2\x80\xA6(" + std::to_string(length) + " bytes)"), std::string::npos)
        << error;
  };
  expect_cut(Get("/v2/models/" + model), 404, model.size());
  expect_cut(Get("/v2/models/" + model + "/ready"), 404, model.size());
  expect_cut(Get("/" + model), 404, model.size() + 1);
  expect_cut(Get("/v2/models/image/" + model), 404, model.size() + 6);
  expect_cut(Post("/v2/repository/models/image/" + model, "{}"), 404, model.size() + 6);
  expect_cut(Post("/v2/repository/models/image/load", "{\"" + model + "\":1}"), 400, model.size());
  // Header values too.
  for (const std::string header : {"Transfer-Encoding: ", "Inference-Header-Content-Length: "}) {
    TestHttpClient raw_client(Seconds(5));
    ASSERT_TRUE(raw_client.Connect(port_).ok());
    const std::string body = InferBody(1);
    auto raw = raw_client.SendRaw("POST /v2/models/image/infer HTTP/1.1\r\nHost: x\r\n" + header +
                                  model + "\r\nContent-Length: " + std::to_string(body.size()) +
                                  "\r\nConnection: close\r\n\r\n" + body);
    ASSERT_TRUE(raw.ok());
    EXPECT_NE(raw->find("\xE2\x80\xA6(5000 bytes)"), std::string::npos) << raw->substr(0, 300);
    EXPECT_LT(raw->size(), 700u) << header;
  }
  expect_cut(Post("/v2/models/" + model + "/infer", InferBody(1)), 404, model.size());
  expect_cut(
      Post("/v2/models/image/infer", R"({"inputs":[{"name":")" + name +
                                         R"(","shape":[1,3],"datatype":"FP32","data":[1,2,3]}]})"),
      400, name.size());
  expect_cut(
      Post("/v2/models/image/infer", R"({"inputs":[{"name":"input","shape":[1,3],"datatype":")" +
                                         name + R"(","data":[1,2,3]}]})"),
      400, name.size());
  expect_cut(
      Post("/v2/models/image/infer", InferBody(1, R"(,"outputs":[{"name":")" + name + R"("}])")),
      400, name.size());
}

TEST_F(HttpServerTest, InferValidationErrors) {
  ExpectInferError("{not json", 400);
  ExpectInferError("", 400);
  ExpectInferError("[1,2]", 400);
  ExpectInferError(InferBody(1), 404, "/v2/models/nope/infer");
  ExpectInferError(R"({"inputs":[]})", 400);
  ExpectInferError(R"({"id":"x"})", 400);
  ExpectInferError(
      R"({"id":7,"inputs":[{"name":"input","shape":[1,3],"datatype":"FP32","data":[1,2,3]}]})",
      400);
  // wrong input name
  ExpectInferError(R"({"inputs":[{"name":"x","shape":[1,3],"datatype":"FP32","data":[1,2,3]}]})",
                   400);
  // datatype mismatch
  ExpectInferError(
      R"({"inputs":[{"name":"input","shape":[1,3],"datatype":"INT64","data":[1,2,3]}]})", 400);
  // element of the wrong type
  ExpectInferError(
      R"({"inputs":[{"name":"input","shape":[1,3],"datatype":"FP32","data":[1,"a",3]}]})", 400);
  // rank mismatch, fixed dim mismatch, negative dim, missing shape
  ExpectInferError(R"({"inputs":[{"name":"input","shape":[3],"datatype":"FP32","data":[1,2,3]}]})",
                   400);
  ExpectInferError(
      R"({"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]})", 400);
  ExpectInferError(
      R"({"inputs":[{"name":"input","shape":[-1,3],"datatype":"FP32","data":[1,2,3]}]})", 400);
  ExpectInferError(R"({"inputs":[{"name":"input","datatype":"FP32","data":[1,2,3]}]})", 400);
  ExpectInferError(R"({"inputs":[{"name":"input","shape":[0,3],"datatype":"FP32","data":[]}]})",
                   400);
  // data count mismatch, missing data
  ExpectInferError(
      R"({"inputs":[{"name":"input","shape":[2,3],"datatype":"FP32","data":[1,2,3]}]})", 400);
  ExpectInferError(R"({"inputs":[{"name":"input","shape":[1,3],"datatype":"FP32"}]})", 400);
  // SLO: negative, zero, absurd, not a number; app not a string; parameters not an object
  ExpectInferError(InferBody(1, R"(,"parameters":{"slo_ms":-5})"), 400);
  ExpectInferError(InferBody(1, R"(,"parameters":{"slo_ms":0})"), 400);
  ExpectInferError(InferBody(1, R"(,"parameters":{"slo_ms":1e12})"), 400);
  ExpectInferError(InferBody(1, R"(,"parameters":{"slo_ms":"fast"})"), 400);
  ExpectInferError(InferBody(1, R"(,"parameters":{"app":3})"), 400);
  ExpectInferError(InferBody(1, R"(,"parameters":[1])"), 400);
  EXPECT_EQ(backend_->submitted(), 0);
}

TEST_F(HttpServerTest, NestedDataIsAccepted) {
  const std::string body =
      R"({"inputs":[{"name":"input","shape":[2,3],"datatype":"FP32","data":[[1,2,3],[4,5,6]]}]})";
  EXPECT_EQ(Post("/v2/models/image/infer", body).status, 200);
}

TEST_F(HttpServerTest, BackendErrorsMapToHttp) {
  const std::pair<Status, int> cases[] = {
      {ResourceExhaustedError("queue full"), 429},
      {UnavailableError("no workers"), 503},
      {Status(StatusCode::kDeadlineExceeded, "late"), 504},
      {InternalError("boom"), 500},
      {InvalidArgumentError("bad"), 400},
      {NotFoundError("gone"), 404},
  };
  for (const auto& [status, http] : cases) {
    backend_->FailWith(status);
    const TestResponse r = Post("/v2/models/image/infer", InferBody(1));
    EXPECT_EQ(r.status, http) << status.ToString();
    EXPECT_EQ(json::parse(r.body)["error"], status.message());
  }
  backend_->ClearFailure();
  EXPECT_EQ(Post("/v2/models/image/infer", InferBody(1)).status, 200);
}

TEST_F(HttpServerTest, UnknownPathAndWrongMethod) {
  EXPECT_EQ(Get("/nope").status, 404);
  EXPECT_EQ(Get("/v2/models/image/bogus").status, 404);
  EXPECT_EQ(Get("/v2/models/image/infer/x").status, 404);
  const TestResponse get_infer = Get("/v2/models/image/infer");
  EXPECT_EQ(get_infer.status, 405);
  EXPECT_EQ(get_infer.allow, "POST");
  EXPECT_TRUE(json::parse(get_infer.body).contains("error"));
  EXPECT_EQ(Post("/v2/health/live", "").status, 405);
  EXPECT_EQ(Post("/v2/models/image", "{}").status, 405);
  // versions are not exposed, so none can be pinned
  EXPECT_EQ(Post("/v2/models/image/versions/resnet50/infer", InferBody(1)).status, 404);
  TestHttpClient client;
  ASSERT_TRUE(client.Connect(port_).ok());
  auto del = client.Request("DELETE", "/v2/models/image");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->status, 405);
  // The query string is ignored.
  EXPECT_EQ(Get("/v2/health/live?verbose=1").status, 200);
}

TEST_F(HttpServerTest, KeepAliveReusesOneConnection) {
  TestHttpClient client;
  ASSERT_TRUE(client.Connect(port_).ok());
  for (int i = 0; i < 200; ++i) {
    auto r = (i % 3 == 0) ? client.Get("/v2/health/ready")
             : (i % 3 == 1)
                 ? client.Post("/v2/models/image/infer", InferBody(1))
                 : client.Post("/v2/models/image/infer", "{broken");  // errors keep the connection
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    EXPECT_EQ(r->status, i % 3 == 2 ? 400 : 200);
    EXPECT_TRUE(r->keep_alive);
  }
  EXPECT_EQ(server_->metrics().OpenConnections(), 1);
}

TEST_F(HttpServerTest, MetricsCountsResponsesByStatus) {
  Get("/v2/health/live");
  Get("/nope");
  Post("/v2/models/image/infer", InferBody(1));
  const TestResponse r = Get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.content_type.find("text/plain"), std::string::npos);
  EXPECT_NE(r.body.find("sloserve_http_responses_total{code=\"200\"} 2"), std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("sloserve_http_responses_total{code=\"404\"} 1"), std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("sloserve_http_connections_open"), std::string::npos);
}

}  // namespace
}  // namespace sloserve

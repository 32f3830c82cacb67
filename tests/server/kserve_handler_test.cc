// KServeHandler and ParseInferRequest without sockets.
#include "sloserve/server/kserve_handler.h"
#include "sloserve/server/json_util.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
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

// A load or unload answers the state it left the model in, not the state read when the
// answer is written: a concurrent client's call may have moved it on (FakeBackend's model
// stays READY whatever is asked).
TEST(KServeHandlerTest, RepositoryAnswersTheirOwnOutcome) {
  FakeBackend backend;
  KServeHandler handler({}, {TextTask()}, &backend, nullptr);
  const HttpResponse unload = handler.RenderRepository({"text", false}, OkStatus());
  EXPECT_EQ(unload.status, 200);
  EXPECT_EQ(json::parse(unload.body)["state"], "UNAVAILABLE") << unload.body;
  const HttpResponse load = handler.RenderRepository({"text", true}, OkStatus());
  EXPECT_EQ(json::parse(load.body)["state"], "READY") << load.body;
  const HttpResponse failed =
      handler.RenderRepository({"text", true}, UnavailableError("no worker reachable"));
  EXPECT_EQ(failed.status, 503);
  EXPECT_NE(failed.body.find("no worker reachable"), std::string::npos) << failed.body;
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
  EXPECT_EQ(j["parameters"]["variant"], "bert-tiny");
  EXPECT_FALSE(j.contains("model_version"));
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

TaskInfo AnyTask(const std::string& datatype) {
  TaskInfo t;
  t.name = "m";
  t.variants = {"v"};
  t.input_name = "x";
  t.input_datatype = datatype;
  t.input_shape = {-1, -1};
  t.default_slo = Millis(100);
  return t;
}

std::string Body(const std::string& datatype, const std::string& shape, const std::string& data) {
  return R"({"inputs":[{"name":"x","datatype":")" + datatype + R"(","shape":)" + shape +
         R"(,"data":)" + data + "}]}";
}

std::vector<uint8_t> Bytes(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n);
}

// The input's elements, row-major, as little-endian bytes of the datatype (the hosts
// these tests run on are little-endian, so memcpy of native values is the expected layout).
TEST(KServeHandlerTest, InputsAreParsedIntoBytesPerDatatype) {
  static_assert(std::endian::native == std::endian::little);
  {
    auto call = ParseInferRequest(AnyTask("FP32"), Body("FP32", "[2,2]", "[[1.5,-2],[0.25,3]]"),
                                  Seconds(10));
    ASSERT_TRUE(call.ok()) << call.status().ToString();
    ASSERT_EQ(call->request.inputs.size(), 1u);
    const Tensor& t = call->request.inputs[0];
    EXPECT_EQ(t.name, "x");
    EXPECT_EQ(t.datatype, "FP32");
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
    const float want[] = {1.5f, -2.0f, 0.25f, 3.0f};
    EXPECT_EQ(t.data, Bytes(want, sizeof want));
  }
  {
    auto call = ParseInferRequest(AnyTask("INT64"),
                                  Body("INT64", "[1,3]", "[-1, 9007199254740993, 7]"), Seconds(10));
    ASSERT_TRUE(call.ok()) << call.status().ToString();
    const int64_t want[] = {-1, 9007199254740993LL, 7};
    EXPECT_EQ(call->request.inputs[0].data, Bytes(want, sizeof want));
  }
  {
    auto call = ParseInferRequest(AnyTask("INT8"), Body("INT8", "[1,2]", "[-3,5]"), Seconds(10));
    ASSERT_TRUE(call.ok()) << call.status().ToString();
    const int8_t want[] = {-3, 5};
    EXPECT_EQ(call->request.inputs[0].data, Bytes(want, sizeof want));
  }
  {
    auto call =
        ParseInferRequest(AnyTask("BOOL"), Body("BOOL", "[1,3]", "[true,false,true]"), Seconds(10));
    ASSERT_TRUE(call.ok()) << call.status().ToString();
    EXPECT_EQ(call->request.inputs[0].data, (std::vector<uint8_t>{1, 0, 1}));
  }
  {
    auto call = ParseInferRequest(AnyTask("BYTES"), Body("BYTES", "[2,1]", R"([["ab"],[""]])"),
                                  Seconds(10));
    ASSERT_TRUE(call.ok()) << call.status().ToString();
    // Each element: a 4-byte little-endian length, then the bytes.
    EXPECT_EQ(call->request.inputs[0].data,
              (std::vector<uint8_t>{2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0}));
  }
  {
    auto call =
        ParseInferRequest(AnyTask("FP16"), Body("FP16", "[1,3]", "[1, -2, 0.5]"), Seconds(10));
    ASSERT_TRUE(call.ok()) << call.status().ToString();
    EXPECT_EQ(call->request.inputs[0].data,
              (std::vector<uint8_t>{0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38}));
  }
  // The validation errors are unchanged: a wrong element type, a wrong count.
  auto wrong = ParseInferRequest(AnyTask("BOOL"), Body("BOOL", "[1,2]", "[true,1]"), Seconds(10));
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong.status().message(), "'data' element 1 is not of datatype BOOL");
  auto count = ParseInferRequest(AnyTask("FP32"), Body("FP32", "[1,3]", "[1,2]"), Seconds(10));
  EXPECT_EQ(count.status().message(), "input 'data' has 2 elements but shape [1,3] needs 3");
}

// serve --log-format json: one JSON line per inference request, with its request id.
TEST(KServeHandlerTest, AccessLogWritesOneJsonLinePerRequest) {
  FakeBackend backend;
  std::vector<std::string> lines;
  KServeHandler::Options options;
  options.access_log = [&](const std::string& line) { lines.push_back(line); };
  KServeHandler handler(options, {AnyTask("FP32")}, &backend, nullptr);
  std::string body = Body("FP32", "[2,1]", "[1,2]");
  body.insert(1, R"("id":"req-9",)");
  auto routed = handler.Route(HttpMethod::kPost, "/v2/models/m/infer", body);
  ASSERT_TRUE(std::holds_alternative<InferCall>(routed));
  InferOutcome outcome;
  outcome.variant = "v";
  outcome.worker = "w1";
  outcome.queue_time = Micros(30);
  outcome.met_slo = true;
  EXPECT_EQ(handler.RenderOutcome(std::get<InferCall>(routed), outcome).status, 200);
  outcome.status = Status(StatusCode::kDeadlineExceeded, "dropped");
  outcome.reason = "policy";
  EXPECT_EQ(handler.RenderOutcome(std::get<InferCall>(routed), outcome).status, 504);
  handler.Route(HttpMethod::kPost, "/v2/models/m/infer", "{");  // invalid: logged, no id
  handler.Route(HttpMethod::kGet, "/v2/health/live", "");       // not an inference: not logged
  ASSERT_EQ(lines.size(), 3u);
  const json ok = json::parse(lines[0]);
  EXPECT_EQ(ok["level"], "info");
  EXPECT_EQ(ok["msg"], "infer");
  EXPECT_TRUE(ok["ts"].is_string());
  EXPECT_EQ(ok["request_id"], "req-9");
  EXPECT_EQ(ok["model"], "m");
  EXPECT_EQ(ok["status"], 200);
  EXPECT_EQ(ok["variant"], "v");
  EXPECT_EQ(ok["worker"], "w1");
  EXPECT_EQ(ok["queue_us"], 30);
  EXPECT_EQ(ok["rows"], 2);
  const json dropped = json::parse(lines[1]);
  EXPECT_EQ(dropped["status"], 504);
  EXPECT_EQ(dropped["reason"], "policy");
  EXPECT_EQ(dropped["error"], "dropped");
  const json invalid = json::parse(lines[2]);
  EXPECT_EQ(invalid["status"], 400);
  EXPECT_TRUE(invalid["request_id"].is_null());
  EXPECT_EQ(invalid["level"], "warn");
}

TEST(KServeHandlerTest, RendersOutputsWhenTheOutcomeHasThem) {
  FakeBackend backend;
  KServeHandler handler({}, {AnyTask("FP32")}, &backend, nullptr);
  auto routed =
      handler.Route(HttpMethod::kPost, "/v2/models/m/infer", Body("FP32", "[2,1]", "[1,2]"));
  ASSERT_TRUE(std::holds_alternative<InferCall>(routed));
  const InferCall& call = std::get<InferCall>(routed);
  InferOutcome outcome;
  outcome.variant = "v";
  outcome.worker = "w0";
  Tensor y;
  y.name = "y";
  y.datatype = "FP32";
  y.shape = {2, 1};
  const float ys[] = {2.5f, -4.0f};
  y.data = Bytes(ys, sizeof ys);
  Tensor ids;
  ids.name = "ids";
  ids.datatype = "INT32";
  ids.shape = {2};
  const int32_t is[] = {-7, 2147483647};
  ids.data = Bytes(is, sizeof is);
  Tensor flags;
  flags.name = "flags";
  flags.datatype = "BOOL";
  flags.shape = {2};
  flags.data = {0, 1};
  Tensor labels;
  labels.name = "labels";
  labels.datatype = "BYTES";
  labels.shape = {2};
  labels.data = {3, 0, 0, 0, 'c', 'a', 't', 1, 0, 0, 0, '"'};
  outcome.outputs = {y, ids, flags, labels};
  const HttpResponse r = handler.RenderOutcome(call, outcome);
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  ASSERT_EQ(j["outputs"].size(), 4u);
  EXPECT_EQ(j["outputs"][0]["name"], "y");
  EXPECT_EQ(j["outputs"][0]["datatype"], "FP32");
  EXPECT_EQ(j["outputs"][0]["shape"], json({2, 1}));
  EXPECT_EQ(j["outputs"][0]["data"], json({2.5, -4.0}));
  EXPECT_EQ(j["outputs"][1]["data"], json({-7, 2147483647}));
  EXPECT_EQ(j["outputs"][2]["data"], json({false, true}));
  EXPECT_EQ(j["outputs"][3]["data"], json({"cat", "\""}));
  EXPECT_EQ(j["parameters"]["worker"], "w0");

  // Bytes that do not match the shape are a server error naming the tensor, not garbage.
  y.data.pop_back();
  outcome.outputs = {y};
  const HttpResponse bad = handler.RenderOutcome(call, outcome);
  EXPECT_EQ(bad.status, 500);
  EXPECT_NE(json::parse(bad.body)["error"].get<std::string>().find("'y'"), std::string::npos);

  // A requested output the executor did not return: a 500 naming both, not a silent gap.
  auto asks =
      handler.Route(HttpMethod::kPost, "/v2/models/m/infer",
                    Body("FP32", "[2,1]", "[1,2]").insert(1, R"("outputs":[{"name":"output"}],)"));
  ASSERT_TRUE(std::holds_alternative<InferCall>(asks));
  outcome.outputs = {ids};
  const HttpResponse missing = handler.RenderOutcome(std::get<InferCall>(asks), outcome);
  EXPECT_EQ(missing.status, 500);
  EXPECT_EQ(json::parse(missing.body)["error"],
            "the executor returned no output 'output' (it returned 'ids')");

  // No outputs (the emulated executor): the zero output of the batch's rows, as before.
  outcome.outputs.clear();
  const json zeros = json::parse(handler.RenderOutcome(call, outcome).body);
  EXPECT_EQ(zeros["outputs"][0]["name"], "output");
  EXPECT_EQ(zeros["outputs"][0]["shape"], json({2, 1}));
  EXPECT_EQ(zeros["outputs"][0]["data"], json({0.0, 0.0}));
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

// Error bodies echo client text (a URL's model name): any bytes must still give valid
// JSON. Well-formed UTF-8 is kept, every other byte becomes U+FFFD.
TEST(JsonUtilTest, ErrorBodiesAreValidJsonWhateverTheBytes) {
  const std::string valid = "mod\xC3\xA9le-\xE2\x82\xAC-\xF0\x9F\x98\x80";  // é, €, an emoji
  const std::vector<std::string> invalid = {
      "a\xFF"
      "b",
      "\xC3",
      "\xC0\xAF",
      "\xED\xA0\x80",
      "\xF4\x90\x80\x80",
      "\xE2\x82",
      "\x80x"};
  auto parsed = nlohmann::json::parse(ErrorJson("unknown model '" + valid + "'"));
  EXPECT_EQ(parsed["error"], "unknown model '" + valid + "'");
  for (const std::string& bad : invalid) {
    const std::string body = ErrorJson(bad);
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(body)) << body;
    EXPECT_NE(doc["error"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos) << body;
  }
  EXPECT_EQ(nlohmann::json::parse(ErrorJson("a\xFF"
                                            "b"))["error"],
            "a\xEF\xBF\xBD"
            "b");
}

}  // namespace
}  // namespace sloserve

// A C++ gRPC client (stubs generated from proto/grpc_service.proto) against a real
// `sloserve serve --grpc-port` process on 127.0.0.1: every RPC, typed and raw tensor
// contents, errors as gRPC status codes, and the one backend HTTP and gRPC share.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grpc/grpc_test_util.h"
#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

#if defined(__SANITIZE_ADDRESS__)
// Debian's gRPC is not built with ASan: its process-lifetime allocations may be reported
// as leaks when this test binary exits; LeakSanitizer reads this hook (once per binary).
extern "C" int __lsan_is_turned_off() {
  return 1;
}
#endif

namespace sloserve {
namespace {

using inference::GRPCInferenceService;
using testing::Deadline;
using testing::MetricSum;
using testing::MetricValue;
using testing::Subprocess;

using testing::kBin;

class GrpcServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScopedTempDir("grpc-test");
    const std::string config = dir_->File("serve.yaml");
    std::ofstream(config) << "suite: ramsis-image\n"
                             "task: image\n"
                             "hardware: n1-4cpu\n"
                             "workers: 2\n"
                             "slo_ms: 150\n"
                             "seed: 1\n"
                             "executor: {latency: sample}\n"
                             "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                             "selection: fixed, variant: efficientnet_b0}\n"
                             "server: {input_shape: \"-1,16\", model_control: explicit}\n";
    grpc_port_ = testing::FreeTcpPort();
    process_ = new Subprocess({kBin, "serve", config, "--port", "0", "--grpc-port",
                               std::to_string(grpc_port_), "--duration", "120"});
    ASSERT_TRUE(process_->WaitForStderr("sloserve: ready", std::chrono::seconds(60)))
        << process_->err();
    http_port_ = testing::ListenPort(process_->err());
    stub_ = GRPCInferenceService::NewStub(testing::LocalChannel(grpc_port_)).release();
    inference::ModelMetadataRequest req;
    req.set_name("image");
    inference::ModelMetadataResponse meta;
    ASSERT_TRUE(stub_->ModelMetadata(Deadline().get(), req, &meta).ok());
    input_name_ = meta.inputs(0).name();
  }
  static void TearDownTestSuite() {
    delete stub_;
    delete process_;
    delete dir_;
  }

  // A valid typed request of `rows` rows.
  static inference::ModelInferRequest Request(int rows) {
    inference::ModelInferRequest req;
    req.set_model_name("image");
    req.set_id("req-1");
    auto* in = req.add_inputs();
    in->set_name(input_name_);
    in->set_datatype("FP32");
    in->add_shape(rows);
    in->add_shape(16);
    for (int i = 0; i < rows * 16; ++i) in->mutable_contents()->add_fp32_contents(0.5f * i);
    return req;
  }

  static ::grpc::Status Infer(const inference::ModelInferRequest& req,
                              inference::ModelInferResponse* resp) {
    return stub_->ModelInfer(Deadline().get(), req, resp);
  }

  static testing::ScopedTempDir* dir_;
  static Subprocess* process_;
  static GRPCInferenceService::Stub* stub_;
  static uint16_t grpc_port_, http_port_;
  static std::string input_name_;
};

testing::ScopedTempDir* GrpcServeTest::dir_ = nullptr;
Subprocess* GrpcServeTest::process_ = nullptr;
GRPCInferenceService::Stub* GrpcServeTest::stub_ = nullptr;
uint16_t GrpcServeTest::grpc_port_ = 0;
uint16_t GrpcServeTest::http_port_ = 0;
std::string GrpcServeTest::input_name_;

TEST_F(GrpcServeTest, HealthAndMetadata) {
  inference::ServerLiveResponse live;
  ASSERT_TRUE(stub_->ServerLive(Deadline().get(), {}, &live).ok());
  EXPECT_TRUE(live.live());
  inference::ServerReadyResponse ready;
  ASSERT_TRUE(stub_->ServerReady(Deadline().get(), {}, &ready).ok());
  EXPECT_TRUE(ready.ready());
  inference::ServerMetadataResponse server;
  ASSERT_TRUE(stub_->ServerMetadata(Deadline().get(), {}, &server).ok());
  EXPECT_EQ(server.name(), "sloserve");
  for (const char* ext : {"statistics", "schedule_policy", "parameters"}) {  // as GET /v2
    EXPECT_NE(std::find(server.extensions().begin(), server.extensions().end(), ext),
              server.extensions().end())
        << ext;
  }
  EXPECT_FALSE(server.version().empty());

  inference::ModelMetadataRequest mreq;
  mreq.set_name("image");
  inference::ModelMetadataResponse meta;
  ASSERT_TRUE(stub_->ModelMetadata(Deadline().get(), mreq, &meta).ok());
  EXPECT_EQ(meta.name(), "image");
  EXPECT_EQ(meta.platform(), "sloserve");
  EXPECT_EQ(meta.versions_size(), 0);  // not exposed, as over HTTP (docs/protocol.md)
  ASSERT_EQ(meta.inputs_size(), 1);
  EXPECT_EQ(meta.inputs(0).datatype(), "FP32");
  EXPECT_EQ(std::vector<int64_t>(meta.inputs(0).shape().begin(), meta.inputs(0).shape().end()),
            (std::vector<int64_t>{-1, 16}));
  ASSERT_EQ(meta.outputs_size(), 1);
  EXPECT_EQ(meta.outputs(0).name(), "output");

  // The same task as HTTP's: one backend behind both ports.
  const auto http = nlohmann::json::parse(testing::HttpGetBody(http_port_, "/v2/models/image"));
  EXPECT_EQ(http["inputs"][0]["name"], meta.inputs(0).name());
  EXPECT_EQ(http["inputs"][0]["shape"], nlohmann::json({-1, 16}));

  inference::ModelReadyRequest rreq;
  rreq.set_name("image");
  inference::ModelReadyResponse rresp;
  ASSERT_TRUE(stub_->ModelReady(Deadline().get(), rreq, &rresp).ok());
  EXPECT_TRUE(rresp.ready());
  // Any version is unknown: HTTP's /v2/models/image/versions/... is 404 too.
  for (const char* version : {"efficientnet_b0", "no-such-version"}) {
    rreq.set_version(version);
    const ::grpc::Status s = stub_->ModelReady(Deadline().get(), rreq, &rresp);
    EXPECT_EQ(s.error_code(), ::grpc::StatusCode::NOT_FOUND) << version;
    EXPECT_NE(s.error_message().find("no versions"), std::string::npos) << s.error_message();
    mreq.set_version(version);
    EXPECT_EQ(stub_->ModelMetadata(Deadline().get(), mreq, &meta).error_code(),
              ::grpc::StatusCode::NOT_FOUND);
  }
  mreq.clear_version();
  EXPECT_EQ(nlohmann::json::parse(testing::HttpGetBody(http_port_, "/v2/models/image"))
                .contains("versions"),
            false);
  rreq.set_name("no-such-model");
  rreq.clear_version();
  EXPECT_EQ(stub_->ModelReady(Deadline().get(), rreq, &rresp).error_code(),
            ::grpc::StatusCode::NOT_FOUND);
  mreq.set_name("no-such-model");
  const ::grpc::Status s = stub_->ModelMetadata(Deadline().get(), mreq, &meta);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("no-such-model"), std::string::npos) << s.error_message();
}

TEST_F(GrpcServeTest, InferTypedContents) {
  inference::ModelInferResponse resp;
  inference::ModelInferRequest req = Request(3);
  (*req.mutable_parameters())["slo_ms"].set_int64_param(150);
  req.add_outputs()->set_name("output");
  const ::grpc::Status s = Infer(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.model_name(), "image");
  EXPECT_EQ(resp.model_version(), "");  // versions are not exposed (as over HTTP)
  EXPECT_EQ(resp.id(), "req-1");
  ASSERT_EQ(resp.outputs_size(), 1);
  EXPECT_EQ(resp.outputs(0).datatype(), "FP32");
  EXPECT_EQ(std::vector<int64_t>(resp.outputs(0).shape().begin(), resp.outputs(0).shape().end()),
            (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(resp.outputs(0).contents().fp32_contents_size(), 3);
  EXPECT_EQ(resp.raw_output_contents_size(), 0);
  const auto& p = resp.parameters();
  ASSERT_TRUE(p.count("variant") && p.count("worker") && p.count("batch_size") &&
              p.count("queue_us") && p.count("compute_us") && p.count("met_slo"));
  EXPECT_EQ(p.at("variant").string_param(), "efficientnet_b0");
  EXPECT_GE(p.at("batch_size").int64_param(), 1);
  EXPECT_GT(p.at("compute_us").int64_param(), 0);
  EXPECT_EQ(p.at("worker").string_param().rfind("w", 0), 0u);

  // slo_ms as a double and as a numeric string (clients differ).
  (*req.mutable_parameters())["slo_ms"].set_double_param(200.5);
  EXPECT_TRUE(Infer(req, &resp).ok());
  (*req.mutable_parameters())["slo_ms"].set_string_param("300");
  EXPECT_TRUE(Infer(req, &resp).ok());
  // Triton's priority: the low class of the default two levels is served when not overloaded.
  (*req.mutable_parameters())["priority"].set_int64_param(2);
  const ::grpc::Status low = Infer(req, &resp);
  EXPECT_TRUE(low.ok()) << low.error_message();
}

TEST_F(GrpcServeTest, InferRawContents) {
  inference::ModelInferRequest req = Request(2);
  std::string raw(2 * 16 * sizeof(float), '\0');
  for (int i = 0; i < 32; ++i) {
    const float v = static_cast<float>(i);
    std::memcpy(raw.data() + i * sizeof(float), &v, sizeof v);
  }
  req.mutable_inputs(0)->clear_contents();
  req.add_raw_input_contents(raw);
  inference::ModelInferResponse resp;
  const ::grpc::Status s = Infer(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.outputs_size(), 1);
  EXPECT_FALSE(resp.outputs(0).has_contents());
  ASSERT_EQ(resp.raw_output_contents_size(), 1);
  EXPECT_EQ(resp.raw_output_contents(0).size(), 2 * sizeof(float));  // [2,1] FP32
}

TEST_F(GrpcServeTest, ErrorsAreStatusCodes) {
  inference::ModelInferResponse resp;
  struct Case {
    const char* what;
    std::function<void(inference::ModelInferRequest&)> edit;
    ::grpc::StatusCode code;
    const char* names;  // the message names the problem
  };
  const std::vector<Case> cases = {
      {"unknown model", [](auto& r) { r.set_model_name("nope"); }, ::grpc::StatusCode::NOT_FOUND,
       "nope"},
      {"pinned version", [](auto& r) { r.set_model_version("efficientnet_b0"); },
       ::grpc::StatusCode::NOT_FOUND, "no versions"},
      {"unknown version", [](auto& r) { r.set_model_version("v9"); }, ::grpc::StatusCode::NOT_FOUND,
       "v9"},
      {"wrong input name", [](auto& r) { r.mutable_inputs(0)->set_name("x"); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "'x'"},
      {"wrong datatype", [](auto& r) { r.mutable_inputs(0)->set_datatype("INT32"); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "INT32"},
      {"element count",
       [](auto& r) { r.mutable_inputs(0)->mutable_contents()->add_fp32_contents(1); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "33 elements"},
      {"contents field of another datatype",
       [](auto& r) { r.mutable_inputs(0)->mutable_contents()->add_int_contents(1); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "int_contents"},
      {"shape", [](auto& r) { r.mutable_inputs(0)->set_shape(1, 15); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "shape"},
      {"raw size",
       [](auto& r) {
         r.mutable_inputs(0)->clear_contents();
         r.add_raw_input_contents(std::string(7, '\0'));
       },
       ::grpc::StatusCode::INVALID_ARGUMENT, "7 bytes"},
      {"contents and raw", [](auto& r) { r.add_raw_input_contents(std::string(128, '\0')); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "both"},
      {"slo_ms range", [](auto& r) { (*r.mutable_parameters())["slo_ms"].set_int64_param(-5); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "slo_ms"},
      {"slo_ms type", [](auto& r) { (*r.mutable_parameters())["slo_ms"].set_bool_param(true); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "slo_ms"},
      {"priority range", [](auto& r) { (*r.mutable_parameters())["priority"].set_int64_param(3); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "parameter 'priority' must be an integer in [0, 2]"},
      {"priority type", [](auto& r) { (*r.mutable_parameters())["priority"].set_double_param(1); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "parameter 'priority'"},
      {"unknown output", [](auto& r) { r.add_outputs()->set_name("logits"); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "logits"},
      {"two inputs", [](auto& r) { *r.add_inputs() = r.inputs(0); },
       ::grpc::StatusCode::INVALID_ARGUMENT, "exactly one input"},
  };
  for (const Case& c : cases) {
    inference::ModelInferRequest req = Request(2);
    c.edit(req);
    const ::grpc::Status s = Infer(req, &resp);
    EXPECT_EQ(s.error_code(), c.code) << c.what << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.names), std::string::npos)
        << c.what << ": " << s.error_message();
  }
}

// Issue 37: a 100 kB model or input name was echoed whole into `grpc-message`, past the
// client's metadata limit, so the client saw RESOURCE_EXHAUSTED instead of the status.
// Names are echoed cut to 128 bytes ("…(N bytes)"), and the code is the right one.
TEST_F(GrpcServeTest, LongNamesAreEchoedCutSoTheStatusArrives) {
  const std::string name(100'000, 'n');
  const std::string cut = std::string(128, 'n') + "\xE2\x80\xA6(100000 bytes)";
  inference::ModelInferResponse resp;
  inference::ModelInferRequest req = Request(1);
  req.set_model_name(name);
  ::grpc::Status s = Infer(req, &resp);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::NOT_FOUND) << s.error_message().substr(0, 200);
  EXPECT_EQ(s.error_message(), "unknown model '" + cut + "' (served: image)");
  req = Request(1);
  req.mutable_inputs(0)->set_name(name);
  s = Infer(req, &resp);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message().substr(0, 200);
  EXPECT_NE(s.error_message().find("unknown input '" + cut + "'"), std::string::npos)
      << s.error_message().substr(0, 400);
  req = Request(1);
  req.mutable_inputs(0)->set_datatype(name);
  s = Infer(req, &resp);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 400u) << s.error_message().substr(0, 400);
  req = Request(1);
  req.add_outputs()->set_name(name);
  s = Infer(req, &resp);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 400u) << s.error_message().substr(0, 400);
  req = Request(1);
  req.set_model_version(name);
  s = Infer(req, &resp);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::NOT_FOUND);
  EXPECT_LT(s.error_message().size(), 400u) << s.error_message().substr(0, 400);
  inference::ModelMetadataRequest mreq;
  mreq.set_name(name);
  inference::ModelMetadataResponse meta;
  s = stub_->ModelMetadata(Deadline().get(), mreq, &meta);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "unknown model '" + cut + "' (served: image)");
  inference::ModelReadyRequest rreq;
  rreq.set_name(name);
  inference::ModelReadyResponse rresp;
  EXPECT_EQ(stub_->ModelReady(Deadline().get(), rreq, &rresp).error_code(),
            ::grpc::StatusCode::NOT_FOUND);
}

// Issue 37: each string with invalid UTF-8 in a request wrote a `[libprotobuf ERROR ...]`
// line to the server's stderr, so a client could fill its log. libprotobuf's messages go
// through a rate limit: at most 5 a minute, prefixed "sloserve: libprotobuf".
TEST_F(GrpcServeTest, InvalidUtf8StringsDoNotFloodTheLog) {
  // This process's own libprotobuf complains when it serializes the strings: not wanted.
  google::protobuf::LogHandler* previous = google::protobuf::SetLogHandler(nullptr);
  const size_t before = process_->err().size();
  inference::ModelInferResponse resp;
  for (int i = 0; i < 40; ++i) {
    inference::ModelInferRequest req = Request(1);
    req.set_model_name("image\xff\xfe");
    req.set_id("id\xc3");
    (void)Infer(req, &resp);  // refused or NOT_FOUND: only the log matters here
  }
  // Still serving.
  inference::ModelInferRequest ok = Request(1);
  EXPECT_TRUE(Infer(ok, &resp).ok());
  google::protobuf::SetLogHandler(previous);
  (void)process_->WaitForStderr("no such line", std::chrono::seconds(2));  // reads what came
  const std::string log = process_->err().substr(before);
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("[libprotobuf"), 0u) << log.substr(0, 2000);
  EXPECT_GE(count("sloserve: libprotobuf"), 1u) << log.substr(0, 2000);
  EXPECT_LE(count("sloserve: libprotobuf"), 5u) << log.substr(0, 2000);
}

TEST_F(GrpcServeTest, ShedIsResourceExhausted) {
  // A burst of 200 requests at once, far more than two workers of efficientnet_b0 (~54 ms)
  // clear within the 150 ms SLO: admission control refuses those that would wait too
  // long, which gRPC clients see as RESOURCE_EXHAUSTED (HTTP's 429); the rest are served.
  struct Call {
    ::grpc::ClientContext ctx;
    inference::ModelInferRequest req;
    inference::ModelInferResponse resp;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::map<::grpc::StatusCode, int> codes;
  int finished = 0;
  constexpr int kCalls = 200;
  std::vector<std::unique_ptr<Call>> calls;
  for (int i = 0; i < kCalls; ++i) {
    auto c = std::make_unique<Call>();
    c->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    c->req = Request(1);
    Call* raw = c.get();
    calls.push_back(std::move(c));
    stub_->async()->ModelInfer(&raw->ctx, &raw->req, &raw->resp, [&](::grpc::Status st) {
      std::lock_guard<std::mutex> lock(mu);
      ++codes[st.error_code()];
      ++finished;
      cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(90), [&] { return finished == kCalls; }));
  EXPECT_GT(codes[::grpc::StatusCode::RESOURCE_EXHAUSTED], 0);
  EXPECT_GT(codes[::grpc::StatusCode::OK], 0);
}

TEST_F(GrpcServeTest, ATightSloAnIdleServerCannotMeetIsNotAShed) {
  // 20 ms: above the fastest variant (19.5 ms at the median, so the request is valid) but
  // below efficientnet_b0's ~54 ms, the variant this deployment runs. That is no overload
  // (a retry would not help): the request is admitted, and dropped before it runs as its
  // batch would end past its deadline (DEADLINE_EXCEEDED, HTTP's 504).
  inference::ModelInferRequest req = Request(1);
  (*req.mutable_parameters())["slo_ms"].set_double_param(20);
  inference::ModelInferResponse resp;
  const ::grpc::Status s = Infer(req, &resp);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
}

TEST_F(GrpcServeTest, SloBelowTheFastestVariantIsInvalidArgument) {
  // Below every variant's latency (issue 36): a client error naming the fastest achievable
  // latency, as over HTTP (400), not a shed.
  inference::ModelInferRequest req = Request(1);
  (*req.mutable_parameters())["slo_ms"].set_double_param(0.001);
  inference::ModelInferResponse resp;
  const ::grpc::Status s = Infer(req, &resp);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("below the fastest achievable latency"), std::string::npos)
      << s.error_message();
}

TEST_F(GrpcServeTest, OneEngineBehindHttpAndGrpc) {
  // Every ModelInfer reaches the engine HTTP feeds: its arrivals counter grows by them.
  auto arrived = [] { return MetricValue(http_port_, "sloserve_queries_arrived_total"); };
  const int64_t before = arrived();
  ASSERT_GE(before, 0);
  // ... and the frontends' request histograms and outcome counters count gRPC requests
  // like HTTP ones (one RequestMetrics behind both ports).
  // Summed over the variant and slo_class labels.
  const std::string met =
      "sloserve_requests_total{model=\"image\",outcome=\"met\",reason=\"none\",";
  const std::string late =
      "sloserve_requests_total{model=\"image\",outcome=\"late\",reason=\"late\",";
  const std::string invalid =
      "sloserve_requests_total{model=\"image\",outcome=\"invalid\",reason=\"bad_request\",";
  auto answered = [&] { return MetricSum(http_port_, met) + MetricSum(http_port_, late); };
  const int64_t answered_before = answered();
  const int64_t invalid_before = MetricSum(http_port_, invalid);
  const std::string stats_before = testing::HttpGetBody(http_port_, "/v2/models/image/stats");
  inference::ModelInferResponse resp;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Infer(Request(1), &resp).ok());
  inference::ModelInferRequest bad = Request(1);
  bad.mutable_inputs(0)->set_datatype("INT8");
  EXPECT_EQ(Infer(bad, &resp).error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(arrived() - before, 5);
  EXPECT_EQ(answered() - answered_before, 5);
  EXPECT_EQ(MetricSum(http_port_, invalid) - invalid_before, 1);
  const std::string m = testing::HttpGetBody(http_port_, "/metrics");
  EXPECT_NE(m.find("sloserve_request_duration_seconds_count{model=\"image\",variant=\""
                   "efficientnet_b0\""),
            std::string::npos)
      << m;
  // Triton's statistics extension counts them too.
  const auto successes = [](const std::string& body) {
    return nlohmann::json::parse(body)["model_stats"][0]["inference_stats"]["success"]["count"]
        .get<long>();
  };
  EXPECT_EQ(successes(testing::HttpGetBody(http_port_, "/v2/models/image/stats")) -
                successes(stats_before),
            5);
}

TEST_F(GrpcServeTest, ModelStatisticsAgreesWithRest) {
  auto grpc_stats = [](const std::string& name) {
    inference::ModelStatisticsRequest req;
    req.set_name(name);
    inference::ModelStatisticsResponse resp;
    const ::grpc::Status s = stub_->ModelStatistics(Deadline().get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.model_stats_size(), 1);
    return resp.model_stats_size() == 1 ? resp.model_stats(0) : inference::ModelStatistics();
  };
  const inference::ModelStatistics before = grpc_stats("image");
  // Three successes of 2 rows and one failure (an SLO of 20 ms that the served
  // efficientnet_b0 cannot meet: dropped before it runs).
  inference::ModelInferResponse resp;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Infer(Request(2), &resp).ok());
  inference::ModelInferRequest late = Request(1);
  (*late.mutable_parameters())["slo_ms"].set_double_param(20);
  ASSERT_EQ(Infer(late, &resp).error_code(), ::grpc::StatusCode::DEADLINE_EXCEEDED);

  // No request runs between the two reads: gRPC and REST give the same numbers.
  const inference::ModelStatistics g = grpc_stats("");  // every model: the one task
  const nlohmann::json rest = nlohmann::json::parse(
      testing::HttpGetBody(http_port_, "/v2/models/image/stats"))["model_stats"][0];
  EXPECT_EQ(g.name(), "image");
  EXPECT_EQ(g.name(), rest["name"].get<std::string>());
  EXPECT_EQ(g.version(), rest["version"].get<std::string>());
  EXPECT_EQ(g.last_inference(), rest["last_inference"].get<uint64_t>());
  EXPECT_EQ(g.inference_count(), rest["inference_count"].get<uint64_t>());
  EXPECT_EQ(g.execution_count(), rest["execution_count"].get<uint64_t>());
  const auto& gi = g.inference_stats();
  const std::vector<std::pair<std::string, const inference::StatisticDuration*>> durations = {
      {"success", &gi.success()},
      {"fail", &gi.fail()},
      {"queue", &gi.queue()},
      {"compute_input", &gi.compute_input()},
      {"compute_infer", &gi.compute_infer()},
      {"compute_output", &gi.compute_output()},
      {"cache_hit", &gi.cache_hit()},
      {"cache_miss", &gi.cache_miss()}};
  for (const auto& [key, d] : durations) {
    EXPECT_EQ(d->count(), rest["inference_stats"][key]["count"].get<uint64_t>()) << key;
    EXPECT_EQ(d->ns(), rest["inference_stats"][key]["ns"].get<uint64_t>()) << key;
  }
  EXPECT_EQ(g.batch_stats_size(), 0);
  EXPECT_TRUE(rest["batch_stats"].empty());

  // ... and they count what was sent.
  EXPECT_EQ(gi.success().count() - before.inference_stats().success().count(), 3u);
  EXPECT_EQ(g.inference_count() - before.inference_count(), 6u);
  EXPECT_EQ(gi.fail().count() - before.inference_stats().fail().count(), 1u);
  EXPECT_GT(gi.success().ns(), before.inference_stats().success().ns());
  EXPECT_GT(gi.compute_infer().ns(), before.inference_stats().compute_infer().ns());
  EXPECT_GE(g.last_inference(), before.last_inference());
  EXPECT_GT(g.last_inference(), 0u);

  inference::ModelStatisticsRequest req;
  inference::ModelStatisticsResponse out;
  req.set_name("nope");
  EXPECT_EQ(stub_->ModelStatistics(Deadline().get(), req, &out).error_code(),
            ::grpc::StatusCode::NOT_FOUND);
  req.set_name("image");
  req.set_version("1");
  EXPECT_EQ(stub_->ModelStatistics(Deadline().get(), req, &out).error_code(),
            ::grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcServeTest, RepositoryUnloadAndLoad) {
  auto ready = [] {
    inference::ModelReadyRequest req;
    req.set_name("image");
    inference::ModelReadyResponse resp;
    EXPECT_TRUE(stub_->ModelReady(Deadline().get(), req, &resp).ok());
    return resp.ready();
  };
  auto index_state = [](bool only_ready) {
    inference::RepositoryIndexRequest req;
    req.set_ready(only_ready);
    inference::RepositoryIndexResponse resp;
    EXPECT_TRUE(stub_->RepositoryIndex(Deadline().get(), req, &resp).ok());
    return resp.models_size() == 1 ? resp.models(0).state() : std::string("none");
  };
  const std::string loads = "sloserve_variant_loads_total{variant=\"efficientnet_b0\"}";
  const int64_t loads_before = std::max<int64_t>(0, MetricValue(http_port_, loads));
  ASSERT_TRUE(ready());
  EXPECT_EQ(index_state(false), "READY");

  inference::RepositoryModelUnloadRequest unload;
  unload.set_model_name("image");
  inference::RepositoryModelUnloadResponse unloaded;
  ::grpc::Status s = stub_->RepositoryModelUnload(Deadline().get(), unload, &unloaded);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(ready());
  EXPECT_EQ(index_state(false), "UNAVAILABLE");
  EXPECT_EQ(index_state(true), "none");
  EXPECT_NE(testing::HttpGetBody(http_port_, "/v2/models/image/ready").find("\"ready\":false"),
            std::string::npos);
  inference::ModelInferResponse resp;
  s = Infer(Request(1), &resp);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_NE(s.error_message().find("not loaded"), std::string::npos) << s.error_message();

  inference::RepositoryModelLoadRequest load;
  load.set_model_name("image");
  inference::RepositoryModelLoadResponse loaded;
  s = stub_->RepositoryModelLoad(Deadline().get(), load, &loaded);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(ready());
  EXPECT_EQ(index_state(true), "READY");
  ASSERT_TRUE(Infer(Request(1), &resp).ok());
  // The variant was loaded again on both workers through the worker protocol.
  EXPECT_EQ(MetricValue(http_port_, loads) - loads_before, 2);

  load.set_model_name("nope");
  EXPECT_EQ(stub_->RepositoryModelLoad(Deadline().get(), load, &loaded).error_code(),
            ::grpc::StatusCode::NOT_FOUND);
  load.set_model_name("image");
  (*load.mutable_parameters())["config"].set_string_param("{}");
  s = stub_->RepositoryModelLoad(Deadline().get(), load, &loaded);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("parameters"), std::string::npos) << s.error_message();
}

}  // namespace
}  // namespace sloserve

// REST conformance of `sloserve serve`'s frontend, written from the Open Inference
// Protocol (KServe v2) REST specification and Triton's binary tensor data, statistics and
// model repository extensions: a real HttpServer on 127.0.0.1 in front of a real
// EngineRuntime, spoken to over plain sockets. The runtime's executor echoes each
// request's input as its output, so every datatype is checked both ways, in JSON and as
// binary tensor data. What sloserve chose where the specification leaves a choice
// (versions are not exposed, extensions listed): docs/protocol.md.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "sloserve/engine/worker_protocol.h"
#include "sloserve/runtime/engine_runtime.h"
#include "sloserve/server/http_server.h"

namespace sloserve {
namespace {

using json = nlohmann::json;

// ---- a minimal HTTP/1.1 client: one request per connection (Connection: close) ----

struct RawResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  json Json() const { return json::parse(body); }
};

RawResponse Send(uint16_t port, const std::string& method, const std::string& target,
                 const std::string& body = "",
                 const std::map<std::string, std::string>& headers = {}) {
  RawResponse r;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    ADD_FAILURE() << "connect: " << std::strerror(errno);
    return r;
  }
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  if (method == "POST") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  for (size_t sent = 0; sent < req.size();) {
    const ssize_t n = ::send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string raw;
  char buf[65536];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    raw.append(buf, static_cast<size_t>(n));
  ::close(fd);
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos || raw.size() < 12) {
    ADD_FAILURE() << "no HTTP response to " << method << " " << target << ": '" << raw << "'";
    return r;
  }
  r.status = std::stoi(raw.substr(9, 3));
  size_t at = raw.find("\r\n") + 2;
  while (at < head_end) {
    const size_t eol = raw.find("\r\n", at);
    const std::string line = raw.substr(at, eol - at);
    const size_t colon = line.find(':');
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
    at = eol + 2;
  }
  r.body = raw.substr(head_end + 4);
  return r;
}

// ---- the executor: each query's input comes back as its output ----

class EchoExecutor : public WorkerExecutor {
 public:
  // `run_time`: how long a batch takes (its result is delivered that much later).
  EchoExecutor(PayloadStore* payloads, std::atomic<int>* loads, std::atomic<int>* unloads,
               Duration run_time)
      : payloads_(payloads), loads_(loads), unloads_(unloads), run_time_(run_time) {}
  Duration Send(const WorkerAction& action) override {
    ActionResult r;
    r.id = IdOf(action);
    if (const auto* run = std::get_if<RunBatch>(&action)) {
      r.worker = run->worker;
      r.begin = run->earliest_start;
      for (const Query& q : run->queries) {
        auto inputs = payloads_->Get(q.payload);
        TensorSet out = inputs ? *inputs : TensorSet{};
        for (Tensor& t : out) t.name = "output";
        auto handle = payloads_->Put(std::move(out));
        r.outputs.push_back(handle.ok() ? *handle : PayloadHandle{0});
      }
    } else if (const auto* load = std::get_if<LoadVariant>(&action)) {
      r.worker = load->worker;
      r.begin = load->sent;
      ++*loads_;
    } else {
      ++*unloads_;
      r.worker = std::get<UnloadVariant>(action).worker;
      r.begin = std::get<UnloadVariant>(action).sent;
    }
    r.end = r.begin + (std::holds_alternative<RunBatch>(action) ? run_time_ : Duration(0));
    // The engine's clock: when the last batch ends, when the last unload was sent.
    if (std::holds_alternative<RunBatch>(action))
      last_run_end_us = r.end.time_since_epoch().count();
    if (std::holds_alternative<UnloadVariant>(action))
      last_unload_sent_us = r.begin.time_since_epoch().count();
    sink_->PostAt(std::move(r), r.end);
    return Duration(0);
  }

 private:
  PayloadStore* payloads_;
  std::atomic<int>* loads_;
  std::atomic<int>* unloads_;
  Duration run_time_;

 public:
  std::atomic<int64_t> last_run_end_us{0}, last_unload_sent_us{0};
};

constexpr const char* kModel = "conf model";  // a space: URLs must percent-encode it
constexpr const char* kModelPath = "/v2/models/conf%20model";

ProfileSuite EchoSuite(const std::string& datatype) {
  ProfileSuite s;
  s.set_name("conformance");
  s.set_provenance("tests/conformance");
  TaskSpec t;
  t.name = kModel;
  t.default_slo = Seconds(10);
  t.input_name = "input";
  t.input_datatype = datatype;
  t.input_shape = {-1, 2};
  const TaskId task = s.AddTask(t);
  const HardwareId hw = s.AddHardware(HardwareSpec{"cpu", 1.0, 1, 1});
  const VariantId v = s.AddVariant(VariantSpec{"echo", task, 90.0, 0, Duration(0)});
  for (int b = 1; b <= 8; ++b) s.AddLatency(hw, v, b, LatencyDistribution({1000, 1000, 1000}));
  return s;
}

// A server for a model whose input (and echoed output) has `datatype`.
class Conformance {
 public:
  explicit Conformance(const std::string& datatype, Duration run_time = Duration(0))
      : suite_(EchoSuite(datatype)) {
    RuntimeOptions o;
    o.deployment.workers = 1;
    o.deployment.preload = "none";  // the first batch loads the variant: a cold start
    o.policy.options["variant"] = "echo";
    o.make_executor = [this, run_time](const ProfileSuite&, PayloadStore* payloads) {
      auto executor = std::make_unique<EchoExecutor>(payloads, &loads_, &unloads_, run_time);
      executor_ = executor.get();
      return executor;
    };
    auto rt = EngineRuntime::Create(&suite_, o);
    EXPECT_TRUE(rt.ok()) << rt.status().ToString();
    if (!rt.ok()) return;
    runtime_ = std::move(rt).value();
    runtime_->Start();
    HttpServer::Options so;
    so.port = 0;
    so.access.model_control = ModelControl::kExplicit;  // the repository tests load and unload
    auto server = HttpServer::Create(so, runtime_.get());
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    if (!server.ok()) return;
    server_ = std::move(server).value();
    auto port = server_->Start();
    EXPECT_TRUE(port.ok()) << port.status().ToString();
    port_ = port.ok() ? *port : 0;
  }
  ~Conformance() {
    if (server_) server_->Stop();
    if (runtime_) runtime_->Stop();
  }
  bool ok() const { return port_ != 0; }
  RawResponse Get(const std::string& target) { return Send(port_, "GET", target); }
  RawResponse Post(const std::string& target, const std::string& body,
                   const std::map<std::string, std::string>& headers = {}) {
    return Send(port_, "POST", target, body, headers);
  }
  RawResponse Request(const std::string& method, const std::string& target) {
    return Send(port_, method, target);
  }
  // LoadVariant / UnloadVariant actions the executor received.
  int loads() const { return loads_.load(); }
  int unloads() const { return unloads_.load(); }
  const EchoExecutor& executor() const { return *executor_; }

 private:
  std::atomic<int> loads_{0}, unloads_{0};
  EchoExecutor* executor_ = nullptr;  // owned by the runtime
  ProfileSuite suite_;
  std::unique_ptr<EngineRuntime> runtime_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
};

std::string InferJson(const std::string& datatype, const std::string& data, int rows = 2,
                      const std::string& extra = "") {
  return R"({"id":"c1","inputs":[{"name":"input","datatype":")" + datatype + R"(","shape":[)" +
         std::to_string(rows) + R"(,2],"data":)" + data + "}]" + extra + "}";
}

// A request whose input is binary tensor data; `extra` adds top-level members.
std::pair<std::string, std::map<std::string, std::string>> InferBinary(
    const std::string& datatype, const std::string& bytes, int rows,
    const std::string& extra = "") {
  const std::string head = R"({"inputs":[{"name":"input","datatype":")" + datatype +
                           R"(","shape":[)" + std::to_string(rows) +
                           R"(,2],"parameters":{"binary_data_size":)" +
                           std::to_string(bytes.size()) + "}}]" + extra + "}";
  return {head + bytes, {{"Inference-Header-Content-Length", std::to_string(head.size())}}};
}

// The binary part of a response and its JSON part.
std::pair<json, std::string> SplitBinary(const RawResponse& r) {
  const size_t n = std::stoul(r.header("inference-header-content-length"));
  return {json::parse(r.body.substr(0, n)), r.body.substr(n)};
}

// ---- every datatype, JSON and binary, both ways ----

struct DatatypeCase {
  const char* datatype;
  const char* json_data;     // 4 elements, shape [2,2]
  std::string bytes;         // the same 4 elements as binary tensor data (little-endian)
  const char* out_of_range;  // one out-of-range element list, or null if none exists
};

std::string Le(std::initializer_list<uint8_t> b) {
  return std::string(b.begin(), b.end());
}

std::vector<DatatypeCase> Datatypes() {
  return {
      {"BOOL", "[true,false,false,true]", Le({1, 0, 0, 1}), nullptr},
      {"UINT8", "[0,1,254,255]", Le({0, 1, 254, 255}), "[0,1,2,256]"},
      {"UINT16", "[0,1,2,65535]", Le({0, 0, 1, 0, 2, 0, 255, 255}), "[0,1,2,65536]"},
      {"UINT32", "[0,1,2,4294967295]", Le({0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 255, 255, 255, 255}),
       "[0,1,2,-1]"},
      {"UINT64", "[0,1,2,3]", Le({0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
                                  2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}),
       "[0,1,2,-3]"},
      {"INT8", "[-128,-1,0,127]", Le({0x80, 0xff, 0, 0x7f}), "[0,1,2,128]"},
      {"INT16", "[-32768,-1,0,32767]", Le({0, 0x80, 0xff, 0xff, 0, 0, 0xff, 0x7f}),
       "[0,1,2,-32769]"},
      {"INT32", "[-1,0,1,2]", Le({0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0}),
       "[0,1,2,2147483648]"},
      {"INT64", "[-1,0,1,2]",
       Le({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0,
           1,    0,    0,    0,    0,    0,    0,    0,    2, 0, 0, 0, 0, 0, 0, 0}),
       "[0,1,2,9223372036854775808]"},
      {"FP16", "[1,-2,0.5,65504]", Le({0, 0x3c, 0, 0xc0, 0, 0x38, 0xff, 0x7b}), "[0,1,2,70000]"},
      {"BF16", "[1,-2,0.5,0]", Le({0x80, 0x3f, 0, 0xc0, 0, 0x3f, 0, 0}), "[0,1,2,3.4e38]"},
      {"FP32", "[1,-2,0.5,0]", Le({0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0x3f, 0, 0, 0, 0}),
       "[0,1,2,1e39]"},
      {"FP64", "[1,-2,0.5,0]", Le({0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0xc0,
                                   0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0}),
       nullptr},
      {"BYTES", R"(["a","","bc","d"])",
       Le({1, 0, 0, 0, 'a', 0, 0, 0, 0, 2, 0, 0, 0, 'b', 'c', 1, 0, 0, 0, 'd'}), nullptr},
  };
}

class DatatypeConformance : public ::testing::TestWithParam<DatatypeCase> {};

TEST_P(DatatypeConformance, JsonAndBinaryDataRoundTrip) {
  const DatatypeCase& c = GetParam();
  Conformance s(c.datatype);
  ASSERT_TRUE(s.ok());
  const std::string infer = std::string(kModelPath) + "/infer";

  // JSON in, JSON out: the echoed output holds the same values.
  RawResponse r = s.Post(infer, InferJson(c.datatype, c.json_data));
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.Json();
  EXPECT_EQ(j["model_name"], kModel);
  EXPECT_EQ(j["id"], "c1");
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["datatype"], c.datatype);
  EXPECT_EQ(j["outputs"][0]["shape"], json({2, 2}));
  EXPECT_EQ(j["outputs"][0]["data"], json::parse(c.json_data));

  // Binary in, binary out (every output: binary_data_output).
  auto [body, headers] =
      InferBinary(c.datatype, c.bytes, 2, R"(,"parameters":{"binary_data_output":true})");
  r = s.Post(infer, body, headers);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/octet-stream");
  auto [head, binary] = SplitBinary(r);
  EXPECT_EQ(head["outputs"][0]["parameters"]["binary_data_size"], c.bytes.size());
  EXPECT_FALSE(head["outputs"][0].contains("data"));
  EXPECT_EQ(binary, c.bytes);

  // Binary in, JSON out; JSON in, binary out (asked for by output name).
  std::tie(body, headers) = InferBinary(c.datatype, c.bytes, 2);
  r = s.Post(infer, body, headers);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.header("inference-header-content-length").empty());
  EXPECT_EQ(r.Json()["outputs"][0]["data"], json::parse(c.json_data));
  r = s.Post(infer,
             InferJson(c.datatype, c.json_data, 2,
                       R"(,"outputs":[{"name":"output","parameters":{"binary_data":true}}])"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(SplitBinary(r).second, c.bytes);

  // Values outside the datatype's range are refused, not wrapped.
  if (c.out_of_range != nullptr) {
    r = s.Post(infer, InferJson(c.datatype, c.out_of_range));
    EXPECT_EQ(r.status, 400) << c.out_of_range;
    EXPECT_NE(r.Json()["error"].get<std::string>().find("out of the range of"), std::string::npos)
        << r.body;
  }
  // Binary data of the wrong size is refused.
  std::tie(body, headers) = InferBinary(c.datatype, c.bytes.substr(1), 2);
  EXPECT_EQ(s.Post(infer, body, headers).status, 400);
}

INSTANTIATE_TEST_SUITE_P(EveryDatatype, DatatypeConformance, ::testing::ValuesIn(Datatypes()),
                         [](const auto& info) { return std::string(info.param.datatype); });

// ---- endpoints ----

TEST(RestConformance, HealthServerAndModelMetadata) {
  Conformance s("FP32");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.Get("/v2/health/live").status, 200);
  EXPECT_EQ(s.Get("/v2/health/ready").status, 200);
  RawResponse r = s.Get("/v2");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Json()["name"], "sloserve");
  const json extensions = r.Json()["extensions"];
  for (const char* ext :
       {"binary_tensor_data", "statistics", "model_repository", "schedule_policy"}) {
    const json& e = extensions;
    EXPECT_NE(std::find(e.begin(), e.end(), ext), e.end()) << ext;
  }
  r = s.Get(kModelPath);
  ASSERT_EQ(r.status, 200) << r.body;
  json m = r.Json();
  EXPECT_EQ(m["name"], kModel);
  EXPECT_EQ(m["platform"], "sloserve");
  EXPECT_FALSE(m.contains("versions"));  // variants are chosen per request, not addressable
  EXPECT_EQ(m["inputs"][0], json({{"name", "input"}, {"datatype", "FP32"}, {"shape", {-1, 2}}}));
  EXPECT_EQ(m["outputs"][0]["name"], "output");
  r = s.Get(std::string(kModelPath) + "/ready");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Json()["ready"], true);
  // Percent-decoding applies to every segment; a malformed escape is a 400.
  EXPECT_EQ(s.Get("/v2/models/conf%20mod%65l").status, 200);
  EXPECT_EQ(s.Get("/v2/models/conf%2").status, 400);
  EXPECT_EQ(s.Get("/v2/models/conf%zzmodel").status, 400);
  EXPECT_EQ(s.Get("/v2/models/conf model2").status, 400);  // a raw space is malformed HTTP
  EXPECT_EQ(s.Get("/v2/models/nope").status, 404);
  EXPECT_EQ(s.Get("/v2/models/nope/ready").status, 404);
  EXPECT_EQ(s.Get("/nope").status, 404);
  // The unknown model's answer names the served one closest to it (issue 31).
  r = s.Get("/v2/models/conf%20mdoel");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Json()["error"],
            "unknown model 'conf mdoel' (did you mean 'conf model'? served: conf model)");
  // GET /v2/models: every model served, with its state (issue 31).
  r = s.Get("/v2/models");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.Json()["models"].size(), 1u) << r.body;
  EXPECT_EQ(r.Json()["models"][0]["name"], kModel);
  EXPECT_EQ(r.Json()["models"][0]["state"], "READY");
  EXPECT_EQ(s.Post("/v2/models", "").status, 405);
}

TEST(RestConformance, VersionsAreNotExposed) {
  Conformance s("FP32");
  ASSERT_TRUE(s.ok());
  const std::string v = std::string(kModelPath) + "/versions/echo";
  for (const std::string& target : {v, v + "/ready", v + "/stats"}) {
    EXPECT_EQ(s.Get(target).status, 404) << target;
  }
  const RawResponse r = s.Post(v + "/infer", InferJson("FP32", "[1,2,3,4]"));
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.Json()["error"].get<std::string>().find("no versions"), std::string::npos);
  // The response names the variant in its parameters, not as a model_version.
  const RawResponse ok = s.Post(std::string(kModelPath) + "/infer", InferJson("FP32", "[1,2,3,4]"));
  ASSERT_EQ(ok.status, 200);
  EXPECT_FALSE(ok.Json().contains("model_version"));
  EXPECT_EQ(ok.Json()["parameters"]["variant"], "echo");
}

TEST(RestConformance, HeadAnswersWithoutABody) {
  Conformance s("FP32");
  ASSERT_TRUE(s.ok());
  for (const std::string& target : {std::string("/v2/health/live"), std::string("/v2"),
                                    std::string(kModelPath), std::string("/metrics")}) {
    const RawResponse get = s.Get(target);
    const RawResponse head = s.Request("HEAD", target);
    EXPECT_EQ(head.status, get.status) << target;
    EXPECT_TRUE(head.body.empty()) << target << ": " << head.body;
    if (target != "/metrics") {  // /metrics changes between the two requests
      EXPECT_EQ(head.header("content-length"), std::to_string(get.body.size())) << target;
    }
  }
  const RawResponse infer = s.Request("HEAD", std::string(kModelPath) + "/infer");
  EXPECT_EQ(infer.status, 405);
  EXPECT_EQ(infer.header("allow"), "POST");
  EXPECT_TRUE(infer.body.empty());
  const RawResponse put = s.Request("PUT", "/v2/health/live");
  EXPECT_EQ(put.status, 405);
  EXPECT_EQ(put.header("allow"), "GET, HEAD");
}

TEST(RestConformance, InvalidRequestsNameTheProblem) {
  Conformance s("FP32");
  ASSERT_TRUE(s.ok());
  const std::string infer = std::string(kModelPath) + "/infer";
  struct Bad {
    std::string body;
    const char* says;
  };
  const Bad bad[] = {
      {"not json", "malformed JSON"},
      {R"({"inputs":[]})", "'inputs'"},
      {R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2],"data":[1,2]}]})",
       "unknown input 'x'"},
      {InferJson("INT32", "[1,2,3,4]"), "datatype 'INT32'"},
      {R"({"inputs":[{"name":"input","datatype":"FP32","shape":[1,3],"data":[1,2,3]}]})",
       "declared shape"},
      {InferJson("FP32", "[1,2,3]"), "has 3 elements"},
      {InferJson("FP32", "[1,2,3,\"x\"]"), "not of datatype FP32"},
      {InferJson("FP32", "[1,2,3,4]", 2, R"(,"outputs":[{"name":"logits"}])"),
       "unknown output 'logits'"},
      {InferJson("FP32", "[1,2,3,4]", 2, R"(,"outputs":[{"name":"output"},{"name":"output"}])"),
       "requested twice"},
      {InferJson("FP32", "[1,2,3,4]", 2, R"(,"parameters":{"slo_ms":-1})"), "slo_ms"},
      {InferJson("FP32", "[1,2,3,4]", 2, R"(,"parameters":{"binary_data_output":"yes"})"),
       "binary_data_output"},
  };
  for (const Bad& b : bad) {
    const RawResponse r = s.Post(infer, b.body);
    EXPECT_EQ(r.status, 400) << b.body;
    EXPECT_NE(r.Json()["error"].get<std::string>().find(b.says), std::string::npos)
        << b.body << " -> " << r.body;
  }
  // Binary framing errors.
  const std::string bytes(16, '\0');
  auto [body, headers] = InferBinary("FP32", bytes, 2);
  for (const char* length : {"0", "-1", "abc", "100000"}) {
    EXPECT_EQ(s.Post(infer, body, {{"Inference-Header-Content-Length", length}}).status, 400)
        << length;
  }
  EXPECT_EQ(s.Post(infer, body + "xx", headers).status, 400);  // bytes nobody claims
  EXPECT_EQ(s.Post(infer, body.substr(0, body.size() - 1), headers).status, 400);  // short
  EXPECT_EQ(s.Post(infer, body.substr(0, std::stoul(headers.begin()->second))).status, 400);
}

TEST(RestConformance, StatisticsMetricsAndRepository) {
  Conformance s("FP32");
  ASSERT_TRUE(s.ok());
  const std::string infer = std::string(kModelPath) + "/infer";
  std::string worker;
  for (int i = 0; i < 3; ++i) {
    const RawResponse r = s.Post(infer, InferJson("FP32", "[1,2,3,4]"));
    ASSERT_EQ(r.status, 200) << r.body;
    worker = r.Json()["parameters"]["worker"];
  }
  EXPECT_EQ(s.Post(infer, InferJson("FP32", "[1,2,3]")).status, 400);

  RawResponse r = s.Get(std::string(kModelPath) + "/stats");
  ASSERT_EQ(r.status, 200) << r.body;
  json st = r.Json()["model_stats"];
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0]["name"], kModel);
  EXPECT_EQ(st[0]["inference_count"], 6);  // rows
  EXPECT_EQ(st[0]["inference_stats"]["success"]["count"], 3);
  EXPECT_GT(st[0]["inference_stats"]["success"]["ns"].get<int64_t>(), 0);
  EXPECT_EQ(st[0]["inference_stats"]["queue"]["count"], 3);
  EXPECT_GT(st[0]["last_inference"].get<int64_t>(), 0);
  r = s.Get("/v2/models/stats");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Json()["model_stats"].size(), 1u);
  EXPECT_EQ(s.Get("/v2/models/nope/stats").status, 404);

  r = s.Get("/metrics");
  ASSERT_EQ(r.status, 200);
  const std::string labels = "model=\"conf model\",variant=\"echo\",worker=\"" + worker + "\"";
  for (const std::string& line :
       {"sloserve_request_duration_seconds_count{" + labels + "} 3",
        "sloserve_queue_duration_seconds_count{" + labels + "} 3",
        "sloserve_compute_duration_seconds_bucket{" + labels + ",le=\"+Inf\"} 3",
        std::string("sloserve_requests_total{model=\"conf model\",outcome=\"invalid\","
                    "reason=\"bad_request\",variant=\"none\",slo_class=\"none\"} 1")}) {
    EXPECT_NE(r.body.find(line + "\n"), std::string::npos) << line << "\n" << r.body;
  }
  // The first batch loaded the variant (preload none), measured per variant.
  EXPECT_NE(r.body.find("sloserve_variant_loads_total{variant=\"echo\"} 1\n"), std::string::npos)
      << r.body;
  const size_t met = r.body.find("sloserve_requests_total{model=\"conf model\",outcome=\"met\"");
  const size_t late = r.body.find("sloserve_requests_total{model=\"conf model\",outcome=\"late\"");
  ASSERT_NE(met, std::string::npos);
  ASSERT_NE(late, std::string::npos);

  r = s.Post("/v2/repository/index", "");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.Json().size(), 1u);
  EXPECT_EQ(r.Json()[0]["name"], kModel);
  EXPECT_EQ(r.Json()[0]["state"], "READY");
}

TEST(RestConformance, RepositoryLoadAndUnloadDriveTheWorkers) {
  Conformance s("FP32");
  ASSERT_TRUE(s.ok());
  const std::string infer = std::string(kModelPath) + "/infer";
  const std::string ready = std::string(kModelPath) + "/ready";
  const std::string unload = "/v2/repository/models/conf%20model/unload";
  const std::string load = "/v2/repository/models/conf%20model/load";
  ASSERT_EQ(s.Post(infer, InferJson("FP32", "[1,2,3,4]")).status, 200);  // a cold start
  EXPECT_EQ(s.loads(), 1);
  EXPECT_EQ(s.Get(ready).status, 200);

  RawResponse r = s.Post(unload, "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["state"], "UNAVAILABLE");
  EXPECT_EQ(s.unloads(), 1);  // the resident variant was released on its worker
  r = s.Get(ready);
  EXPECT_EQ(r.status, 400);  // the health API's "4xx indicates false"
  EXPECT_EQ(r.Json()["ready"], false);
  EXPECT_NE(r.Json()["reason"].get<std::string>().find("unloaded"), std::string::npos) << r.body;
  r = s.Post(infer, InferJson("FP32", "[1,2,3,4]"));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.Json()["error"].get<std::string>().find("not loaded"), std::string::npos) << r.body;
  r = s.Post("/v2/repository/index", "");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Json()[0]["state"], "UNAVAILABLE");
  EXPECT_TRUE(r.Json()[0].contains("reason"));
  EXPECT_EQ(s.Post(unload, "").status, 200);  // already unloaded: nothing to do
  EXPECT_EQ(s.unloads(), 1);

  r = s.Post(load, R"({"parameters":{}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["state"], "READY");
  EXPECT_EQ(s.loads(), 2);  // what the unload released is resident again
  EXPECT_EQ(s.Get(ready).status, 200);
  EXPECT_EQ(s.Post(infer, InferJson("FP32", "[1,2,3,4]")).status, 200);
  EXPECT_EQ(s.loads(), 2);  // no cold start: it was loaded
  EXPECT_EQ(s.Post("/v2/repository/index", "").Json()[0]["state"], "READY");

  // Errors name the problem.
  r = s.Post("/v2/repository/models/nope/load", "");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("nope"), std::string::npos);
  r = s.Get(load);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("allow"), "POST");
  EXPECT_EQ(s.Post("/v2/repository/models/conf%20model/reload", "").status, 404);
  EXPECT_EQ(s.Post("/v2/repository/models/conf%zzmodel/load", "").status, 400);
  r = s.Post(load, R"({"parameters":{"config":"{}"}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("parameters"), std::string::npos) << r.body;
  EXPECT_EQ(s.Post(load, "[1]").status, 400);
  EXPECT_EQ(s.Post(load, "{").status, 400);
}

TEST(RestConformance, UnloadWaitsForTheRequestsInTheSystem) {
  // Batches take 300 ms: an unload sent while one runs answers after its request did.
  Conformance s("FP32", Millis(300));
  ASSERT_TRUE(s.ok());
  const std::string infer = std::string(kModelPath) + "/infer";
  int infer_status = 0;
  std::thread client([&] { infer_status = s.Post(infer, InferJson("FP32", "[1,2,3,4]")).status; });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the batch is running
  const RawResponse r = s.Post("/v2/repository/models/conf%20model/unload", "");
  client.join();
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(infer_status, 200);  // served, not cut off by the unload
  ASSERT_EQ(s.unloads(), 1);
  // The variant was released only once the batch running it had ended (engine clock).
  EXPECT_GE(s.executor().last_unload_sent_us.load(), s.executor().last_run_end_us.load());
  EXPECT_GT(s.executor().last_run_end_us.load(), 0);
}

}  // namespace
}  // namespace sloserve

#pragma once
// Helpers of the gRPC tests: a free TCP port on 127.0.0.1 for a server that takes its
// port on the command line (gRPC's 0 means "off" in sloserve), a channel to it, a value
// of its HTTP /metrics, and requests for the tests' model "image" (input [-1,16] FP32).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "support/http_get.h"

namespace sloserve::testing {

// The sloserve binary under test (set by tests/grpc/CMakeLists.txt); one definition for
// the files grpc_test compiles as one unity batch.
inline const std::string kBin = SLOSERVE_BINARY;

// A port no socket listens on right now (the kernel's next ephemeral one); 0 on failure.
inline uint16_t FreeTcpPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  socklen_t len = sizeof addr;
  uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

inline std::shared_ptr<::grpc::Channel> LocalChannel(uint16_t port) {
  return ::grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                               ::grpc::InsecureChannelCredentials());
}

// A client context with a deadline, so a test never hangs on a call.
inline std::unique_ptr<::grpc::ClientContext> Deadline(
    std::chrono::seconds s = std::chrono::seconds(10)) {
  auto ctx = std::make_unique<::grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + s);
  return ctx;
}

// A whole-number series of the /metrics text of the server on `http_port` (the line with
// exactly these labels); -1 if absent.
inline int64_t MetricValue(uint16_t http_port, const std::string& series) {
  const std::string m = HttpGetBody(http_port, "/metrics");
  const std::string key = "\n" + series + " ";
  const size_t at = m.find(key);
  return at == std::string::npos ? -1 : std::llround(std::stod(m.substr(at + key.size())));
}

// The sum of the /metrics samples of the server on `http_port` whose series starts with
// `prefix` (e.g. every variant and SLO class of one outcome of sloserve_requests_total);
// -1 if none does.
inline int64_t MetricSum(uint16_t http_port, const std::string& prefix) {
  const std::string m = HttpGetBody(http_port, "/metrics");
  int64_t sum = -1;
  for (size_t at = m.find("\n" + prefix); at != std::string::npos;
       at = m.find("\n" + prefix, at + 1)) {
    const size_t space = m.find(' ', at + 1 + prefix.size());
    if (space == std::string::npos) break;
    sum = std::max<int64_t>(sum, 0) + std::llround(std::stod(m.substr(space + 1)));
  }
  return sum;
}

// The metadata of model "image" from the server behind `stub` (empty on failure, which
// the test is told).
inline inference::ModelMetadataResponse ImageMetadata(inference::GRPCInferenceService::Stub* stub) {
  inference::ModelMetadataRequest req;
  req.set_name("image");
  inference::ModelMetadataResponse meta;
  const ::grpc::Status s = stub->ModelMetadata(Deadline().get(), req, &meta);
  EXPECT_TRUE(s.ok() && meta.inputs_size() == 1) << s.error_message();
  return meta;
}

// A request of `rows` rows of 16 FP32 ones for model "image", whose metadata is `meta`.
inline inference::ModelInferRequest ImageRequest(const inference::ModelMetadataResponse& meta,
                                                 int rows) {
  inference::ModelInferRequest req;
  req.set_model_name("image");
  auto* in = req.add_inputs();
  in->set_name(meta.inputs(0).name());
  in->set_datatype("FP32");
  in->add_shape(rows);
  in->add_shape(16);
  for (int i = 0; i < rows * 16; ++i) in->mutable_contents()->add_fp32_contents(1.0f);
  return req;
}

// Sends `req` `n` times, one after another, expecting each answered; how many each engine
// worker (the response's parameter "worker") served.
inline std::map<std::string, int> InferOneByOne(inference::GRPCInferenceService::Stub* stub,
                                                const inference::ModelInferRequest& req, int n) {
  std::map<std::string, int> by_worker;
  for (int i = 0; i < n; ++i) {
    inference::ModelInferResponse resp;
    const ::grpc::Status s = stub->ModelInfer(Deadline().get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (s.ok()) ++by_worker[resp.parameters().at("worker").string_param()];
  }
  return by_worker;
}

}  // namespace sloserve::testing

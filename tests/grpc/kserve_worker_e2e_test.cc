// A KServe v2 gRPC server as the worker of `sloserve serve` (server.kserve_workers,
// docs/remote-workers.md): the "model server" is a second `sloserve serve --grpc-port`
// process. Each batch the front server forms is one ModelInfer with the batch dimension:
// the back server sees the rows of every request, in fewer (or as many) requests, and
// each client gets its own rows back. When the back server dies, requests end (each
// once) instead of hanging. With two back servers, the health checks mark a killed
// one down (the other takes the load) and bring it back when it is restarted.
#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "grpc/grpc_test_util.h"
#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

using testing::Subprocess;

const std::string kServeBin = SLOSERVE_BINARY;

std::string WriteKServeConfig(const testing::ScopedTempDir& dir) {
  const std::string config = dir.File("serve.yaml");
  std::ofstream(config) << "suite: ramsis-image\n"
                           "task: image\n"
                           "hardware: n1-4cpu\n"
                           "workers: 1\n"
                           "slo_ms: 5000\n"
                           "seed: 1\n"
                           "executor: {latency: sample}\n"
                           "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                           "selection: fixed, variant: resnet18}\n"
                           "server: {input_shape: \"-1,16\"}\n";
  return config;
}

// A `sloserve serve --grpc-port` as the KServe v2 server (the "model server").
std::unique_ptr<Subprocess> StartBackServer(const std::string& config, uint16_t grpc_port) {
  auto back = std::make_unique<Subprocess>(
      std::vector<std::string>{kServeBin, "serve", config, "--port", "0", "--grpc-port",
                               std::to_string(grpc_port), "--duration", "120"});
  EXPECT_TRUE(back->WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << back->err();
  return back;
}

TEST(KServeWorkerE2E, EachBatchIsOneModelInferOnTheServer) {
  testing::ScopedTempDir dir("kserve-e2e");
  const std::string config = WriteKServeConfig(dir);
  const uint16_t back_grpc = testing::FreeTcpPort();
  auto back = StartBackServer(config, back_grpc);
  const uint16_t back_http = testing::ListenPort(back->err());
  const uint16_t front_grpc = testing::FreeTcpPort();
  Subprocess front({kServeBin, "serve", config, "--port", "0", "--grpc-port",
                    std::to_string(front_grpc), "--duration", "120", "--set",
                    "server.kserve_workers=127.0.0.1:" + std::to_string(back_grpc), "--set",
                    "server.kserve_model=image"});
  ASSERT_TRUE(front.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << front.err();

  auto stub = inference::GRPCInferenceService::NewStub(testing::LocalChannel(front_grpc));
  const inference::ModelMetadataResponse meta = testing::ImageMetadata(stub.get());
  ASSERT_EQ(meta.inputs_size(), 1);
  auto request = [&](int rows) { return testing::ImageRequest(meta, rows); };

  // 24 requests of 2 rows from 8 threads at once: the front server batches them.
  constexpr int kThreads = 8, kEach = 3, kRows = 2;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        inference::ModelInferResponse resp;
        const ::grpc::Status s = stub->ModelInfer(testing::Deadline().get(), request(kRows), &resp);
        EXPECT_TRUE(s.ok()) << s.error_message();
        if (!s.ok()) continue;
        // Its own rows back: the server's [batch rows, 1] output split per request.
        EXPECT_EQ(resp.outputs_size(), 1);
        if (resp.outputs_size() == 1) {
          EXPECT_EQ(resp.outputs(0).shape(0), kRows);
        }
        ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kEach);
  // The back server served every row, in at most one request per front request.
  const int64_t back_requests = testing::MetricValue(back_http, "sloserve_queries_arrived_total");
  EXPECT_GE(back_requests, 1);
  EXPECT_LE(back_requests, kThreads * kEach);
  EXPECT_EQ(testing::MetricValue(back_http, "sloserve_rows_served_total{hardware=\"n1-4cpu\"}"),
            kThreads * kEach * kRows);

  // The only server gone: the health checks mark it down, and a request is refused at
  // once, saying why, instead of hanging (docs/remote-workers.md, "Failures").
  back->Signal(SIGKILL);
  back->Wait();
  ASSERT_TRUE(front.WaitForStderr("is down", std::chrono::seconds(10))) << front.err();
  inference::ModelInferResponse resp;
  inference::ModelInferRequest req = request(1);
  (*req.mutable_parameters())["slo_ms"].set_int64_param(300);
  const ::grpc::Status s = stub->ModelInfer(testing::Deadline().get(), req, &resp);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(s.error_message(), "no worker reachable: 1 of 1 remote workers down; retry later");
}

TEST(KServeWorkerE2E, DeadServerIsMarkedDownAndRejoinsWhenRestarted) {
  testing::ScopedTempDir dir("kserve-health");
  const std::string config = WriteKServeConfig(dir);
  const uint16_t p0 = testing::FreeTcpPort(), p1 = testing::FreeTcpPort();
  ASSERT_NE(p0, p1);
  auto b0 = StartBackServer(config, p0);
  auto b1 = StartBackServer(config, p1);
  const uint16_t b0_http = testing::ListenPort(b0->err());
  const uint16_t front_grpc = testing::FreeTcpPort();
  // The remote-worker health keys apply to KServe servers too (checks every 100 ms).
  Subprocess front(
      {kServeBin, "serve", config, "--port", "0", "--grpc-port", std::to_string(front_grpc),
       "--duration", "120", "--set",
       "server.kserve_workers=127.0.0.1:" + std::to_string(p0) + ",127.0.0.1:" + std::to_string(p1),
       "--set", "server.kserve_model=image", "--set", "server.remote_health_interval_ms=100",
       "--set", "server.remote_failures_to_down=2", "--set",
       "server.remote_reconnect_backoff_ms=300"});
  ASSERT_TRUE(front.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << front.err();
  auto stub = inference::GRPCInferenceService::NewStub(testing::LocalChannel(front_grpc));
  const inference::ModelMetadataResponse meta = testing::ImageMetadata(stub.get());
  ASSERT_EQ(meta.inputs_size(), 1);
  const inference::ModelInferRequest one_row = testing::ImageRequest(meta, 1);
  auto serve = [&](int n) { return testing::InferOneByOne(stub.get(), one_row, n); };
  std::map<std::string, int> before = serve(10);
  EXPECT_GT(before["w0"], 0);
  EXPECT_GT(before["w1"], 0);

  // Killed while idle: only the health checks can find it; it is marked down, and every
  // request goes to the other server (none fails).
  b1->Signal(SIGKILL);
  b1->Wait();
  ASSERT_TRUE(front.WaitForStderr("KServe server w1 (127.0.0.1:" + std::to_string(p1) + ") is down",
                                  std::chrono::seconds(10)))
      << front.err();
  const int64_t b0_rows_before =
      testing::MetricValue(b0_http, "sloserve_rows_served_total{hardware=\"n1-4cpu\"}");
  std::map<std::string, int> down = serve(10);
  EXPECT_EQ(down["w0"], 10);
  EXPECT_EQ(testing::MetricValue(b0_http, "sloserve_rows_served_total{hardware=\"n1-4cpu\"}") -
                b0_rows_before,
            10);

  // Restarted on its port, it passes the checks, rejoins and serves again.
  b1 = StartBackServer(config, p1);
  ASSERT_TRUE(front.WaitForStderr(
      "KServe server w1 (127.0.0.1:" + std::to_string(p1) + ") is healthy again",
      std::chrono::seconds(10)))
      << front.err();
  const uint16_t b1_http = testing::ListenPort(b1->err());
  std::map<std::string, int> after = serve(10);
  EXPECT_GT(after["w1"], 0);
  EXPECT_GT(testing::MetricValue(b1_http, "sloserve_rows_served_total{hardware=\"n1-4cpu\"}"), 0);
}

}  // namespace
}  // namespace sloserve

// A KServe v2 gRPC server as the worker of `sloserve serve` (server.kserve_workers,
// docs/remote-workers.md): the "model server" is a second `sloserve serve --grpc-port`
// process. Each batch the front server forms is one ModelInfer with the batch dimension:
// the back server sees the rows of every request, in fewer (or as many) requests, and
// each client gets its own rows back. When the back server dies, requests fail (each
// ends once) instead of hanging.
#include <atomic>
#include <fstream>
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

TEST(KServeWorkerE2E, EachBatchIsOneModelInferOnTheServer) {
  testing::ScopedTempDir dir("kserve-e2e");
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
  const uint16_t back_grpc = testing::FreeTcpPort();
  auto back = std::make_unique<Subprocess>(
      std::vector<std::string>{kServeBin, "serve", config, "--port", "0", "--grpc-port",
                               std::to_string(back_grpc), "--duration", "120"});
  ASSERT_TRUE(back->WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << back->err();
  const uint16_t back_http = testing::ListenPort(back->err());
  const uint16_t front_grpc = testing::FreeTcpPort();
  Subprocess front({kServeBin, "serve", config, "--port", "0", "--grpc-port",
                    std::to_string(front_grpc), "--duration", "120", "--set",
                    "server.kserve_workers=127.0.0.1:" + std::to_string(back_grpc), "--set",
                    "server.kserve_model=image"});
  ASSERT_TRUE(front.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << front.err();

  auto stub = inference::GRPCInferenceService::NewStub(testing::LocalChannel(front_grpc));
  inference::ModelMetadataRequest mreq;
  mreq.set_name("image");
  inference::ModelMetadataResponse meta;
  ASSERT_TRUE(stub->ModelMetadata(testing::Deadline().get(), mreq, &meta).ok());
  auto request = [&](int rows) {
    inference::ModelInferRequest req;
    req.set_model_name("image");
    auto* in = req.add_inputs();
    in->set_name(meta.inputs(0).name());
    in->set_datatype("FP32");
    in->add_shape(rows);
    in->add_shape(16);
    for (int i = 0; i < rows * 16; ++i) in->mutable_contents()->add_fp32_contents(1.0f);
    return req;
  };

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

  // The server gone: a request fails (re-queued once, then executor_error), not hangs.
  back->Signal(SIGKILL);
  back->Wait();
  inference::ModelInferResponse resp;
  const ::grpc::Status s = stub->ModelInfer(testing::Deadline().get(), request(1), &resp);
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::UNAVAILABLE) << s.error_message();
}

}  // namespace
}  // namespace sloserve

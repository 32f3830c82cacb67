#pragma once
// Helpers of the remote-worker e2e tests (remote_worker_e2e_test.cc,
// remote_worker_failure_e2e_test.cc): the config, `sloserve worker` and `sloserve serve`
// processes on 127.0.0.1, and an open-loop gRPC client that records each request's end.
#include <condition_variable>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "grpc/grpc_test_util.h"
#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "support/counts_summary.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sloserve::remote_test {

using testing::kBin;
using testing::Subprocess;

// `preload`: the variants the engine starts with as resident ("" = all, the default).
inline std::string WriteConfig(const testing::ScopedTempDir& dir, const std::string& preload = "") {
  const std::string path = dir.File("remote.yaml");
  std::ofstream(path) << "suite: ramsis-image\n"
                         "task: image\n"
                         "hardware: n1-4cpu\n"
                         "workers: 2\n"
                      << (preload.empty() ? "" : "preload: " + preload + "\n")
                      << "slo_ms: 1000\n"
                         "seed: 1\n"
                         "executor: {latency: sample}\n"
                         "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                         "selection: fixed, variant: resnet18}\n"
                         "server: {input_shape: \"-1,16\"}\n";
  return path;
}

// `extra`: more flags of `sloserve worker` (e.g. --run-port 0).
inline std::unique_ptr<Subprocess> StartWorker(const std::string& config, uint16_t port,
                                               const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{
      kBin, "worker", config, "--listen", "127.0.0.1:" + std::to_string(port), "--duration", "120"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto w = std::make_unique<Subprocess>(args);
  EXPECT_TRUE(w->WaitForStderr("listening on grpc://", std::chrono::seconds(30))) << w->err();
  return w;
}

// `sloserve serve` with the workers on ports p0 and p1, gRPC on `grpc_port`. Health checks
// every 100 ms (the default is 200), reconnection attempts at most 500 ms apart: the
// timing options (docs/remote-workers.md) reach the executor. Model control is on (the
// tests unload and load the model).
inline std::vector<std::string> ServeArgs(const std::string& config, uint16_t p0, uint16_t p1,
                                          uint16_t grpc_port) {
  const std::string w0 = "127.0.0.1:" + std::to_string(p0), w1 = "127.0.0.1:" + std::to_string(p1);
  // clang-format off
  return {kBin, "serve", config, "--port", "0", "--grpc-port", std::to_string(grpc_port),
          "--remote-worker", w0, "--remote-worker", w1, "--duration", "120",
          "--set", "server.remote_health_interval_ms=100",
          "--set", "server.remote_reconnect_backoff_ms=500",
          "--set", "server.model_control=explicit"};
  // clang-format on
}

// The HTTP port `sloserve serve` printed ("listening on http://127.0.0.1:PORT"); 0 if none.
inline uint16_t HttpPortOf(const Subprocess& serve) {
  const std::string& log = serve.err();
  const size_t at = log.find("http://127.0.0.1:");
  return at == std::string::npos ? 0 : static_cast<uint16_t>(std::stoi(log.substr(at + 17)));
}

// Two `sloserve worker`s (w0, w1) on free ports and a `sloserve serve` dispatching to them,
// its gRPC port free too. Start() returns once serve is ready; call it as
// ASSERT_NO_FATAL_FAILURE(two.Start(config)).
struct TwoWorkerServe {
  // The Runs on the workers' TCP Run channel (worker --run-port 0,
  // server.worker_run_transport=tcp) instead of their gRPC Run stream.
  bool tcp_runs = false;
  std::string config;
  uint16_t p0 = 0, p1 = 0, grpc_port = 0, http_port = 0;
  std::unique_ptr<Subprocess> w0, w1, serve;
  // A client of serve's gRPC port, model "image"'s metadata and a one-row request of it.
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub;
  inference::ModelMetadataResponse meta;
  inference::ModelInferRequest request;

  void Start(const std::string& config_path) {
    config = config_path;
    p0 = testing::FreeTcpPort();
    p1 = testing::FreeTcpPort();
    ASSERT_NE(p0, p1);
    const std::vector<std::string> run_port =
        tcp_runs ? std::vector<std::string>{"--run-port", "0"} : std::vector<std::string>{};
    w0 = StartWorker(config, p0, run_port);
    w1 = StartWorker(config, p1, run_port);
    grpc_port = testing::FreeTcpPort();
    std::vector<std::string> args = ServeArgs(config, p0, p1, grpc_port);
    if (tcp_runs) args.insert(args.end(), {"--set", "server.worker_run_transport=tcp"});
    serve = std::make_unique<Subprocess>(args);
    ASSERT_TRUE(serve->WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << serve->err();
    http_port = HttpPortOf(*serve);
    ASSERT_NE(http_port, 0) << serve->err();
    stub = inference::GRPCInferenceService::NewStub(testing::LocalChannel(grpc_port));
    meta = testing::ImageMetadata(stub.get());
    ASSERT_EQ(meta.inputs_size(), 1);
    request = testing::ImageRequest(meta, 1);
  }
};

// An open-loop gRPC client of model "image": each request's outcome ("w0"/"w1" for the
// worker that served it, else the gRPC code and message), recorded once per request, by
// the phase it was sent in.
class PhasedClient {
 public:
  struct Outcome {
    bool ok = false;
    std::string worker;  // ok: the worker that served it
    ::grpc::StatusCode code = ::grpc::StatusCode::OK;
    std::string message;
  };
  PhasedClient(inference::GRPCInferenceService::Stub* stub, inference::ModelInferRequest req)
      : stub_(stub), req_(std::move(req)) {}
  ~PhasedClient() { WaitAll(std::chrono::seconds(60)); }

  // Sends one request (client deadline 30 s: far beyond any server-side end).
  void Send(int phase) {
    auto c = std::make_unique<Call>();
    c->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    c->phase = phase;
    Call* raw = c.get();
    {
      std::lock_guard<std::mutex> lock(mu_);
      calls_.push_back(std::move(c));
    }
    stub_->async()->ModelInfer(&raw->ctx, &req_, &raw->resp, [this, raw](::grpc::Status s) {
      std::lock_guard<std::mutex> lock(mu_);
      if (raw->ends++ > 0) ++duplicate_;
      raw->out.ok = s.ok();
      raw->out.code = s.error_code();
      raw->out.message = s.error_message();
      if (s.ok()) raw->out.worker = raw->resp.parameters().at("worker").string_param();
      ++finished_;
      cv_.notify_all();
    });
  }
  // Sends one request `period` after the previous paced one (an open-loop rate).
  void SendPaced(int phase, std::chrono::milliseconds period) {
    if (next_ == std::chrono::steady_clock::time_point{}) next_ = std::chrono::steady_clock::now();
    Send(phase);
    next_ += period;
    std::this_thread::sleep_until(next_);
  }
  bool WaitAll(std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return finished_ == calls_.size(); });
  }
  size_t sent() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_.size();
  }
  int duplicate() {
    std::lock_guard<std::mutex> lock(mu_);
    return duplicate_;
  }
  // The outcomes of the requests sent in `phase` (after WaitAll).
  std::vector<Outcome> Of(int phase) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Outcome> out;
    for (const auto& c : calls_) {
      if (c->phase == phase) out.push_back(c->out);
    }
    return out;
  }
  // "w0: 40, w1: 38, code 14 (execution failed ...): 2"
  static std::string Summary(const std::vector<Outcome>& outcomes) {
    std::map<std::string, int64_t> counts;
    for (const Outcome& o : outcomes) {
      ++counts[o.ok ? o.worker
                    : "code " + std::to_string(static_cast<int>(o.code)) + " (" + o.message + ")"];
    }
    return testing::CountsSummary(counts);
  }

 private:
  struct Call {
    ::grpc::ClientContext ctx;
    inference::ModelInferResponse resp;
    int phase = 0;
    int ends = 0;  // under mu_
    Outcome out;   // under mu_
  };
  inference::GRPCInferenceService::Stub* const stub_;
  const inference::ModelInferRequest req_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Call>> calls_;
  size_t finished_ = 0;
  int duplicate_ = 0;
  std::chrono::steady_clock::time_point next_{};  // SendPaced
};

// The engine ended every query it admitted exactly once: its arrivals are the requests
// it was sent, and its met + late + dropped its arrivals.
// The queries the engine ended (met + late + dropped), from /metrics.
inline int64_t EndedQueries(uint16_t http_port) {
  return testing::MetricValue(http_port, "sloserve_queries_finished_total{outcome=\"met\"}") +
         testing::MetricValue(http_port, "sloserve_queries_finished_total{outcome=\"late\"}") +
         testing::MetricValue(http_port, "sloserve_queries_finished_total{outcome=\"dropped\"}");
}

inline void ExpectEveryArrivalEnded(uint16_t http_port, int64_t sent) {
  const int64_t arrived = testing::MetricValue(http_port, "sloserve_queries_arrived_total");
  EXPECT_EQ(arrived, sent);
  EXPECT_EQ(EndedQueries(http_port), arrived);
}

// A request that was not served ended with a status of the server's (executor_error or
// no worker: UNAVAILABLE; its SLO passed: DEADLINE_EXCEEDED; shed: RESOURCE_EXHAUSTED),
// not the client's own 30 s deadline ("Deadline Exceeded"), which only a lost request
// reaches.
inline void ExpectServedOrClearError(const std::vector<PhasedClient::Outcome>& outcomes) {
  for (const PhasedClient::Outcome& o : outcomes) {
    if (o.ok) continue;
    EXPECT_TRUE(o.code == ::grpc::StatusCode::UNAVAILABLE ||
                o.code == ::grpc::StatusCode::DEADLINE_EXCEEDED ||
                o.code == ::grpc::StatusCode::RESOURCE_EXHAUSTED)
        << o.code << " " << o.message;
    EXPECT_NE(o.message, "Deadline Exceeded");
  }
}

}  // namespace sloserve::remote_test

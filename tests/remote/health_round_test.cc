// The controllers' health checks (RemoteExecutor's Health, KServeExecutor's ServerReady)
// run in rounds: every worker is asked at once and the calls are given up together after
// the timeout (remote/call_round.h). Checked one after
// another, each hung worker added a whole timeout to the round, so the next worker's check
// started a timeout late and a round with k hung workers took k timeouts. The workers here
// are real gRPC servers on 127.0.0.1 that answer Health until told to hang.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "remote/in_process_worker.h"
#include "sloserve/core/mutex.h"
#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "sloserve/proto/worker_service.grpc.pb.h"
#include "sloserve/remote/kserve_executor.h"

// After core/mutex.h: absl's own GUARDED_BY and kin must not come first.
#include <grpcpp/grpcpp.h>

namespace sloserve::remote_test {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

// What a hung server does with a health check: once Hang(true), each check is held until
// its caller gives it up, and when each arrived is recorded.
class Hold {
 public:
  // Holds the check while hanging; false when its caller gave it up.
  bool Pass(::grpc::ServerContext* ctx) EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      if (hang_) {
        held_.push_back(std::chrono::steady_clock::now());
        cv_.NotifyAll();
      }
    }
    while (hanging() && !ctx->IsCancelled())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return !ctx->IsCancelled();
  }
  void Hang(bool hang) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    hang_ = hang;
  }
  // Waits until `n` checks have been held; their arrival times.
  std::vector<SteadyTime> WaitHeld(size_t n) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    cv_.WaitFor(mu_, kWait, [&]() REQUIRES(mu_) { return held_.size() >= n; });
    return held_;
  }

 private:
  bool hanging() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return hang_;
  }

  mutable Mutex mu_;
  CondVar cv_;
  bool hang_ GUARDED_BY(mu_) = false;
  std::vector<SteadyTime> held_ GUARDED_BY(mu_);
};

// A `sloserve worker`'s Health (the only call a controller makes before it sends work),
// answered as a worker of `suite` would.
class WorkerHealthService final : public worker::WorkerService::Service {
 public:
  WorkerHealthService(const ProfileSuite* suite, std::string instance)
      : suite_(suite), instance_(std::move(instance)) {}
  ::grpc::Status Health(::grpc::ServerContext* ctx, const worker::HealthRequest*,
                        worker::HealthReply* reply) override {
    if (!hold.Pass(ctx)) return {::grpc::StatusCode::CANCELLED, "given up"};
    reply->set_suite(suite_->name());
    for (const auto& v : suite_->variants()) reply->add_variant_names(v.name);
    reply->set_instance(instance_);
    return ::grpc::Status::OK;
  }
  Hold hold;

 private:
  const ProfileSuite* suite_;
  const std::string instance_;
};

// A KServe v2 server's ServerReady (KServeExecutor's health check): ready.
class ReadyService final : public inference::GRPCInferenceService::Service {
 public:
  ::grpc::Status ServerReady(::grpc::ServerContext* ctx, const inference::ServerReadyRequest*,
                             inference::ServerReadyResponse* reply) override {
    if (!hold.Pass(ctx)) return {::grpc::StatusCode::CANCELLED, "given up"};
    reply->set_ready(true);
    return ::grpc::Status::OK;
  }
  Hold hold;
};

// A Service on its own server on 127.0.0.1.
template <class Service>
struct HangingServer {
  template <class... Args>
  explicit HangingServer(Args&&... args) : service(std::forward<Args>(args)...) {
    ::grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", ::grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
  }
  ~HangingServer() {
    service.hold.Hang(false);  // the held checks return before the server waits for them
    if (server) server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }

  Service service;
  int port = 0;
  std::unique_ptr<::grpc::Server> server;
};

// Waits (up to kWait) until `n` workers are down.
template <class Executor>
bool WaitDown(const Executor& executor, int n) {
  const auto until = std::chrono::steady_clock::now() + kWait;
  while (executor.down_workers() != n) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Both servers hang: their checks arrive together round after round, and after two failed
// rounds both are down; answering again, both rejoin. One after another, the second's check
// would come only when the first's was given up: a whole timeout (1 s) later.
template <class Executor>
void HangBothThenResume(const Executor& executor, Hold& a, Hold& b) {
  a.Hang(true);
  b.Hang(true);
  const std::vector<SteadyTime> held_a = a.WaitHeld(2), held_b = b.WaitHeld(2);
  ASSERT_GE(held_a.size(), 2u);
  ASSERT_GE(held_b.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const auto apart = held_a[k] > held_b[k] ? held_a[k] - held_b[k] : held_b[k] - held_a[k];
    EXPECT_LT(apart, std::chrono::milliseconds(500))
        << "round " << k << ": the two hung servers' checks arrived "
        << std::chrono::duration_cast<std::chrono::milliseconds>(apart).count() << " ms apart";
  }
  EXPECT_TRUE(WaitDown(executor, 2)) << executor.down_workers() << " down";
  a.Hang(false);
  b.Hang(false);
  EXPECT_TRUE(WaitDown(executor, 0)) << executor.down_workers() << " still down";
}

// Every timing option of a test's executor: checks every 20 ms, given up after 1 s, two
// failed ones mark a server down.
template <class Options>
Options Fast(const std::string& a, const std::string& b) {
  Options options;
  options.addresses = {a, b};
  options.health_interval = Millis(20);
  options.health_timeout = Seconds(1);
  options.failures_to_down = 2;
  options.reconnect_backoff = Millis(100);
  options.log = [](const std::string&) {};
  return options;
}

TEST(HealthRoundTest, HungWorkersAreCheckedAtOnceNotOneTimeoutAfterAnother) {
  const ProfileSuite suite = testing::SmallSuite();
  HangingServer<WorkerHealthService> w0(&suite, "hanging-0"), w1(&suite, "hanging-1");
  ASSERT_TRUE(w0.server && w1.server);
  PayloadStore payloads(size_t{1} << 20);
  RecordingSink sink;
  RemoteExecutor executor(&suite, &payloads,
                          Fast<RemoteExecutorOptions>(w0.address(), w1.address()));
  const Status connected = executor.Connect();
  ASSERT_TRUE(connected.ok()) << connected.ToString();
  executor.Attach(&sink);
  HangBothThenResume(executor, w0.service.hold, w1.service.hold);
}

TEST(HealthRoundTest, HungKServeServersAreCheckedAtOnce) {
  const ProfileSuite suite = testing::SmallSuite();
  HangingServer<ReadyService> s0, s1;
  ASSERT_TRUE(s0.server && s1.server);
  PayloadStore payloads(size_t{1} << 20);
  RecordingSink sink;
  KServeExecutor executor(&suite, &payloads,
                          Fast<KServeExecutorOptions>(s0.address(), s1.address()));
  executor.Attach(&sink);
  HangBothThenResume(executor, s0.service.hold, s1.service.hold);
}

}  // namespace
}  // namespace sloserve::remote_test

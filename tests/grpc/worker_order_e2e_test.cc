// Issue 33 item 3: a `sloserve worker` runs a session's numbered lifecycle actions
// (Load/Unload, LifecycleRequest.sequence) in their order, whatever order its gRPC threads
// receive them in (8 here); a gap (a number that never comes) is skipped after a wait and
// the late number is refused. A real worker process, driven by an in-process client.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "grpc/remote_worker_test_util.h"
#include "sloserve/proto/worker_service.grpc.pb.h"

namespace sloserve {
namespace {

using testing::Subprocess;

class LifecycleClient {
 public:
  explicit LifecycleClient(uint16_t port)
      : stub_(worker::WorkerService::NewStub(testing::LocalChannel(port))) {}
  ~LifecycleClient() { WaitAll(); }

  // Sends Load (or Unload) of `variant` numbered `sequence` without waiting; its index.
  size_t Send(const std::string& session, uint64_t sequence, bool load, uint32_t variant) {
    auto c = std::make_unique<Call>();
    c->req.set_session(session);
    c->req.set_action(sequence);
    c->req.set_sequence(sequence);
    c->req.set_variant(variant);
    c->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(2));
    Call* raw = c.get();
    size_t index;
    {
      std::lock_guard<std::mutex> lock(mu_);
      index = calls_.size();
      calls_.push_back(std::move(c));
    }
    auto done = [this, raw](::grpc::Status s) {
      std::lock_guard<std::mutex> lock(mu_);
      raw->status = s;
      raw->done = true;
      cv_.notify_all();
    };
    if (load) {
      stub_->async()->Load(&raw->ctx, &raw->req, &raw->reply, done);
    } else {
      stub_->async()->Unload(&raw->ctx, &raw->req, &raw->reply, done);
    }
    return index;
  }
  bool Done(size_t index) {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_[index]->done;
  }
  ::grpc::Status Wait(size_t index) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::minutes(2), [&] { return calls_[index]->done; });
    return calls_[index]->status;
  }
  void WaitAll() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::minutes(2), [&] {
      return std::all_of(calls_.begin(), calls_.end(), [](const auto& c) { return c->done; });
    });
  }
  int Failed() {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const auto& c : calls_) n += c->done && (!c->status.ok() || c->reply.code() != 0);
    return n;
  }
  std::vector<uint32_t> Loaded() {
    ::grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    worker::HealthReply reply;
    EXPECT_TRUE(stub_->Health(&ctx, worker::HealthRequest(), &reply).ok());
    return {reply.loaded_variants().begin(), reply.loaded_variants().end()};
  }

 private:
  struct Call {
    ::grpc::ClientContext ctx;
    worker::LifecycleRequest req;
    worker::ActionReply reply;
    ::grpc::Status status;
    bool done = false;
  };
  std::unique_ptr<worker::WorkerService::Stub> stub_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Call>> calls_;
};

bool HoldsVariant(const std::vector<uint32_t>& v, uint32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::unique_ptr<Subprocess> StartEightThreadWorker(const std::string& config, uint16_t port) {
  auto w = std::make_unique<Subprocess>(std::vector<std::string>{
      testing::kBin, "worker", config, "--listen", "127.0.0.1:" + std::to_string(port),
      "--duration", "120", "--threads", "8"});
  EXPECT_TRUE(w->WaitForStderr("listening on grpc://", std::chrono::seconds(30))) << w->err();
  return w;
}

// Number 2 arriving first waits for number 1; 200 alternating Loads and Unloads of one
// variant sent in reverse order end as the last number says (an Unload), where running
// them as they arrive would end with number 1 (a Load).
TEST(WorkerOrderE2E, LifecycleActionsRunInTheirSessionsOrder) {
  testing::ScopedTempDir dir("sloserve-order");
  const uint16_t port = testing::FreeTcpPort();
  auto w = StartEightThreadWorker(remote_test::WriteConfig(dir), port);
  LifecycleClient client(port);
  const size_t second = client.Send("s", 2, /*load=*/true, 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(client.Done(second)) << "number 2 ran before number 1 came";
  EXPECT_FALSE(HoldsVariant(client.Loaded(), 3));
  EXPECT_TRUE(client.Wait(client.Send("s", 1, /*load=*/false, 5)).ok());
  EXPECT_TRUE(client.Wait(second).ok());
  EXPECT_TRUE(HoldsVariant(client.Loaded(), 3));

  for (uint64_t seq = 200; seq >= 1; --seq) client.Send("t", seq, /*load=*/seq % 2 == 1, 4);
  client.WaitAll();
  EXPECT_EQ(client.Failed(), 0);
  EXPECT_FALSE(HoldsVariant(client.Loaded(), 4)) << "the last number (an Unload) did not run last";
  w->Signal(SIGTERM);
  EXPECT_EQ(w->Wait().exit_code, 0);
}

// A number that never comes (lost before reaching the worker): the next one runs after
// the gap wait (2 s), the skip is logged, and the lost number arriving late is refused
// FAILED_PRECONDITION instead of running out of order.
TEST(WorkerOrderE2E, AGapIsSkippedAfterAWaitAndTheLateNumberRefused) {
  testing::ScopedTempDir dir("sloserve-order");
  const uint16_t port = testing::FreeTcpPort();
  auto w = StartEightThreadWorker(remote_test::WriteConfig(dir), port);
  LifecycleClient client(port);
  EXPECT_TRUE(client.Wait(client.Send("g", 3, /*load=*/true, 6)).ok());
  EXPECT_TRUE(HoldsVariant(client.Loaded(), 6));
  const ::grpc::Status late = client.Wait(client.Send("g", 1, /*load=*/false, 6));
  EXPECT_EQ(late.error_code(), ::grpc::StatusCode::FAILED_PRECONDITION) << late.error_message();
  EXPECT_NE(late.error_message().find("out of order"), std::string::npos) << late.error_message();
  EXPECT_TRUE(HoldsVariant(client.Loaded(), 6));
  EXPECT_TRUE(
      w->WaitForStderr("lifecycle actions 1..2 never came; skipped", std::chrono::seconds(10)))
      << w->err();
  w->Signal(SIGTERM);
  EXPECT_EQ(w->Wait().exit_code, 0);
}

}  // namespace
}  // namespace sloserve

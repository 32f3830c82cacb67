// Payloads through the real-time runtime (issue 10, "Payloads"): a request's input
// tensors go into the runtime's PayloadStore, the engine carries the handle, an injected
// executor resolves it on its own thread, puts its outputs into the store and posts the
// result through the driver's asynchronous path (ResultSink::Post); the client's outcome
// carries those outputs and, once everything is answered, the store is empty.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <future>
#include <thread>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/runtime/engine_runtime.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

std::vector<float> Floats(const Tensor& t) {
  std::vector<float> v(t.data.size() / sizeof(float));
  std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
  return v;
}

Tensor Fp32(std::string name, const std::vector<float>& v) {
  Tensor t;
  t.name = std::move(name);
  t.datatype = "FP32";
  t.shape = {1, static_cast<int64_t>(v.size())};
  t.data.resize(v.size() * sizeof(float));
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

// Runs every action on its own thread: a batch reads each query's input from the store,
// doubles its FP32 values into an output tensor "y", puts it into the store and posts
// the result from that thread. Loads and unloads succeed at once (posted the same way).
class DoublingExecutor : public WorkerExecutor {
 public:
  explicit DoublingExecutor(PayloadStore* store) : store_(store) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~DoublingExecutor() override {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    cv_.NotifyAll();
    thread_.join();
  }

  Duration Send(const WorkerAction& action) override EXCLUDES(mu_) {
    Job job;
    job.id = IdOf(action);
    std::visit([&](const auto& a) { job.worker = a.worker; }, action);
    if (const auto* run = std::get_if<RunBatch>(&action)) {
      job.run = true;
      for (const Query& q : run->queries) job.payloads.push_back(q.payload);
    }
    {
      MutexLock lock(mu_);
      send_thread_ = std::this_thread::get_id();
      jobs_.push_back(std::move(job));
    }
    cv_.NotifyOne();
    return Duration(0);
  }

  std::thread::id executor_thread() const { return thread_.get_id(); }
  std::thread::id send_thread() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return send_thread_;
  }
  std::atomic<int> reads{0};            // inputs resolved
  std::atomic<int> reads_elsewhere{0};  // ... on a thread other than the executor's own
  std::atomic<int> missing{0};          // handles the store did not know

 private:
  struct Job {
    ActionId id = 0;
    WorkerId worker = 0;
    bool run = false;
    std::vector<PayloadHandle> payloads;
  };

  void Loop() EXCLUDES(mu_) {
    while (true) {
      Job job;
      {
        MutexLock lock(mu_);
        cv_.Wait(mu_, [&]() REQUIRES(mu_) { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      ActionResult r;
      r.id = job.id;
      r.worker = job.worker;
      for (PayloadHandle h : job.payloads) {
        std::shared_ptr<const TensorSet> in = store_->Get(h);
        ++reads;
        if (std::this_thread::get_id() != thread_.get_id()) ++reads_elsewhere;
        if (!in || in->empty()) {
          ++missing;
          r.outputs.push_back(0);
          continue;
        }
        std::vector<float> v = Floats((*in)[0]);
        for (float& x : v) x *= 2;
        Tensor y = Fp32("y", v);
        y.shape = (*in)[0].shape;
        StatusOr<PayloadHandle> out = store_->Put({std::move(y)});
        r.outputs.push_back(out.ok() ? *out : 0);
      }
      sink_->Post(std::move(r));
    }
  }

  PayloadStore* store_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<Job> jobs_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread::id send_thread_ GUARDED_BY(mu_);
  std::thread thread_;
};

RuntimeOptions PayloadOptions(int workers) {
  RuntimeOptions o;
  o.deployment.workers = workers;
  o.policy.options["variant"] = "fast";
  return o;
}

InferRequest Request(const std::vector<float>& input) {
  InferRequest req;
  req.task = "t";
  req.slo = Seconds(10);
  req.inputs.push_back(Fp32("x", input));
  return req;
}

TEST(PayloadRuntimeTest, AnInjectedExecutorReadsInputsAndReturnsOutputs) {
  ProfileSuite suite = testing::SmallSuite();
  RuntimeOptions o = PayloadOptions(2);
  DoublingExecutor* executor = nullptr;
  PayloadStore* given = nullptr;
  o.make_executor = [&](const ProfileSuite& s,
                        PayloadStore* store) -> std::unique_ptr<WorkerExecutor> {
    EXPECT_EQ(&s, &suite);
    given = store;
    auto e = std::make_unique<DoublingExecutor>(store);
    executor = e.get();
    return e;
  };
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  ASSERT_NE(executor, nullptr);
  EXPECT_EQ(given, (*rt)->payloads());
  EXPECT_EQ((*rt)->payloads()->max_bytes(), size_t{256} << 20);
  (*rt)->Start();

  constexpr int kRequests = 64;
  std::vector<std::promise<InferOutcome>> promises(kRequests);
  std::vector<std::future<InferOutcome>> futures;
  for (auto& p : promises) futures.push_back(p.get_future());
  for (int i = 0; i < kRequests; ++i) {
    const float f = static_cast<float>(i);
    (*rt)->Submit(Request({f, f + 0.5f, -f}),
                  [&, i](InferOutcome out) { promises[i].set_value(std::move(out)); });
  }
  for (int i = 0; i < kRequests; ++i) {
    InferOutcome out = futures[i].get();
    ASSERT_TRUE(out.status.ok()) << i << ": " << out.status.ToString();
    EXPECT_EQ(out.variant, "fast");
    ASSERT_EQ(out.outputs.size(), 1u) << i;
    const Tensor& y = out.outputs[0];
    EXPECT_EQ(y.name, "y");
    EXPECT_EQ(y.datatype, "FP32");
    EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 3}));
    const float f = static_cast<float>(i);
    EXPECT_EQ(Floats(y), (std::vector<float>{2 * f, 2 * f + 1.0f, -2 * f})) << i;
  }
  EXPECT_EQ(executor->reads.load(), kRequests);
  EXPECT_EQ(executor->missing.load(), 0);
  EXPECT_EQ(executor->reads_elsewhere.load(), 0);  // all on the executor's own thread ...
  EXPECT_NE(executor->send_thread(), executor->executor_thread());  // ... not the engine's
  EXPECT_NE(std::this_thread::get_id(), executor->executor_thread());
  // Every input and output handle was released when its query was answered.
  EXPECT_EQ((*rt)->payloads()->size(), 0u);
  EXPECT_EQ((*rt)->payloads()->bytes(), 0u);
  (*rt)->Stop();
  EXPECT_EQ((*rt)->payloads()->size(), 0u);
}

TEST(PayloadRuntimeTest, TheEmulatedExecutorAnswersWithoutOutputsAndLeaksNothing) {
  ProfileSuite suite = testing::SmallSuite();
  RuntimeOptions o = PayloadOptions(2);
  o.service.time_scale = 0.05;
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  constexpr int kRequests = 32;
  std::vector<std::promise<InferOutcome>> promises(kRequests);
  for (int i = 0; i < kRequests; ++i) {
    (*rt)->Submit(Request({1, 2, 3}),
                  [&, i](InferOutcome out) { promises[i].set_value(std::move(out)); });
  }
  for (auto& p : promises) {
    InferOutcome out = p.get_future().get();
    ASSERT_TRUE(out.status.ok()) << out.status.ToString();
    EXPECT_TRUE(out.outputs.empty());  // the frontend renders its zero output
  }
  EXPECT_EQ((*rt)->payloads()->size(), 0u);
  (*rt)->Stop();
}

TEST(PayloadRuntimeTest, AFullStoreAnswersResourceExhausted) {
  ProfileSuite suite = testing::SmallSuite();
  RuntimeOptions o = PayloadOptions(1);
  o.payload_bytes = 1024;
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  std::promise<InferOutcome> p;
  (*rt)->Submit(Request(std::vector<float>(400, 1.0f)),  // 1600 bytes > 1024
                [&](InferOutcome out) { p.set_value(std::move(out)); });
  InferOutcome out = p.get_future().get();
  EXPECT_EQ(out.status.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(out.status.message().find("1024"), std::string::npos) << out.status.message();
  EXPECT_EQ((*rt)->payloads()->size(), 0u);
  // A request that fits is still served.
  std::promise<InferOutcome> small;
  (*rt)->Submit(Request({1, 2}), [&](InferOutcome o2) { small.set_value(std::move(o2)); });
  EXPECT_TRUE(small.get_future().get().status.ok());
  EXPECT_EQ((*rt)->payloads()->size(), 0u);
  (*rt)->Stop();
}

TEST(PayloadRuntimeTest, ShutdownReleasesTheInputsOfUnservedRequests) {
  ProfileSuite suite = testing::SmallSuite();
  RuntimeOptions o = PayloadOptions(1);
  o.service.time_scale = 20;  // 200 ms per batch: most requests are still queued at Stop
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  constexpr int kRequests = 16;
  std::atomic<int> answered{0};
  for (int i = 0; i < kRequests; ++i) {
    (*rt)->Submit(Request({1, 2, 3}), [&](InferOutcome) { ++answered; });
  }
  (*rt)->Stop(Duration(0));
  EXPECT_EQ(answered.load(), kRequests);     // every request answered exactly once ...
  EXPECT_EQ((*rt)->payloads()->size(), 0u);  // ... and none of their tensors left behind
  EXPECT_EQ((*rt)->payloads()->bytes(), 0u);
}

TEST(PayloadRuntimeTest, PayloadBoundIsRangeChecked) {
  ProfileSuite suite = testing::SmallSuite();
  RuntimeOptions o = PayloadOptions(1);
  o.payload_bytes = 100;
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rt.status().message().find("payload_bytes"), std::string::npos);
  o.payload_bytes = size_t{1} << 10;
  EXPECT_TRUE(EngineRuntime::Create(&suite, o).ok());
}

}  // namespace
}  // namespace sloserve

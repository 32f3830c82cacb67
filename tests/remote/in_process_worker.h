#pragma once
// An in-process remote worker for remote/ unit tests: a real WorkerServer on 127.0.0.1 in
// the test's process (no child process) whose executor is a puppet the test drives
// (WorkerServer::MakeExecutor is the seam): it records each action and answers only when
// told to — never (a lost reply), twice (a duplicate), in any order, or after the
// controller's deadline. The controller side is a real RemoteExecutor; its results go to
// a RecordingSink.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/core/payload_store.h"
#include "sloserve/core/tsan.h"
#include "sloserve/engine/clock.h"
#include "sloserve/engine/worker_protocol.h"
#include "sloserve/grpc/async_unary.h"
#include "sloserve/remote/remote_executor.h"
#include "sloserve/remote/worker_server.h"
#include "support/test_suite.h"

namespace sloserve::remote_test {

// Long enough for any event these tests wait for on a loaded machine or under a
// sanitizer; no test asserts how long anything took.
inline constexpr auto kWait = std::chrono::seconds(20);

// The worker's executor: records every action, answers none by itself.
class PuppetWorkerExecutor : public WorkerExecutor {
 public:
  enum class Kind { kRun, kLoad, kUnload };
  struct Sent {
    Kind kind = Kind::kRun;
    ActionId id = 0;  // the worker's own id for it (what a result must carry)
    VariantId variant = 0;
    QueryId first_query = 0;  // a run's
    size_t input_bytes = 0;   // a run's input tensors' data (with reads_inputs)
  };

  Duration Send(const WorkerAction& action) EXCLUDES(mu_) override {
    Sent s;
    s.id = IdOf(action);
    s.variant = std::visit([](const auto& a) { return a.variant; }, action);
    if (const auto* run = std::get_if<RunBatch>(&action); run && !run->queries.empty()) {
      s.first_query = run->queries.front().id;
      for (const Query& q : run->queries) {
        if (payloads_ == nullptr || q.payload == 0) continue;
        if (auto set = payloads_->Get(q.payload))
          for (const Tensor& t : *set) s.input_bytes += t.data.size();
      }
    }
    s.kind = std::holds_alternative<RunBatch>(action)      ? Kind::kRun
             : std::holds_alternative<LoadVariant>(action) ? Kind::kLoad
                                                           : Kind::kUnload;
    {
      MutexLock lock(mu_);
      sent_.push_back(s);
    }
    cv_.NotifyAll();
    return Duration(0);
  }

  // Waits until at least `n` actions were sent; false if not within kWait.
  bool WaitSent(size_t n) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return cv_.WaitFor(mu_, kWait, [&]() REQUIRES(mu_) { return sent_.size() >= n; });
  }
  size_t sent_count() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return sent_.size();
  }
  Sent sent(size_t i) const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return sent_.at(i);
  }

  // What a run's reply carries to tell it apart: its first query's id, in ms, as its one
  // solo time.
  static Duration Marker(QueryId query) { return Millis(static_cast<int64_t>(query)); }

  // Posts action i's result with `status` (from the test's thread, as a real executor's
  // own threads would); a run's carries its Marker, and with `output_bytes` one output
  // tensor of that many bytes (the worker's payload store: SetPayloads).
  void Answer(size_t i, Status status = OkStatus(), size_t output_bytes = 0) {
    const Sent s = sent(i);
    ActionResult r;
    r.id = s.id;
    r.status = std::move(status);
    r.begin = r.end = clock_.Now();
    if (s.kind == Kind::kRun) r.solo.push_back(Marker(s.first_query));
    if (s.kind == Kind::kRun && output_bytes > 0 && payloads_ != nullptr) {
      Tensor t;
      t.name = "out";
      t.datatype = "UINT8";
      t.shape = {static_cast<int64_t>(output_bytes)};
      t.data.assign(output_bytes, uint8_t{7});
      auto handle = payloads_->Put(TensorSet{std::move(t)});
      EXPECT_TRUE(handle.ok()) << handle.status().ToString();
      if (handle.ok()) r.outputs.push_back(*handle);
    }
    sink_->Post(std::move(r));
  }
  // The worker's payload store (inputs read from the wire, outputs put there).
  void SetPayloads(PayloadStore* payloads) { payloads_ = payloads; }

 private:
  PayloadStore* payloads_ = nullptr;
  SteadyClock clock_;
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<Sent> sent_ GUARDED_BY(mu_);
};

// A WorkerServer serving `suite` with a puppet executor. The puppet lives as long as the
// server (Stop destroys it).
class InProcessWorker {
 public:
  // `port` 0: an ephemeral one. `run_port` >= 0: a TCP Run channel there (0: ephemeral).
  InProcessWorker(const ProfileSuite* suite, uint16_t port = 0, bool reads_inputs = false,
                  int run_port = -1) {
    WorkerServer::Options options;
    options.listen = "127.0.0.1:" + std::to_string(port);
    options.reads_inputs = reads_inputs;
    options.run_port = run_port;
    options.threads = 2;  // the gRPC threads race, as in `sloserve worker`
    options.stop_grace = Millis(200);
    auto server =
        WorkerServer::Create(options, suite, [this](const ProfileSuite&, PayloadStore* p) {
          auto puppet = std::make_unique<PuppetWorkerExecutor>();
          puppet->SetPayloads(p);
          puppet_ = puppet.get();
          return puppet;
        });
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    if (!server.ok()) return;
    server_ = std::move(*server);
    auto bound = server_->Start();
    EXPECT_TRUE(bound.ok()) << bound.status().ToString();
    if (bound.ok()) port_ = *bound;
  }
  ~InProcessWorker() { Stop(); }

  void Stop() {
    if (server_) server_->Stop();
    server_.reset();
    puppet_ = nullptr;
  }
  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  PuppetWorkerExecutor& puppet() { return *puppet_; }
  int64_t actions_done() const { return server_->actions_done(); }
  int64_t health_checks() const { return server_->health_checks(); }
  int64_t tcp_runs_received() const { return server_->tcp_runs_received(); }
  uint16_t run_port() const { return server_->run_port(); }

 private:
  std::unique_ptr<WorkerServer> server_;
  PuppetWorkerExecutor* puppet_ = nullptr;
  uint16_t port_ = 0;
};

// The controller's sink: every result and reachability change, in the order posted.
class RecordingSink : public ResultSink {
 public:
  void PostAt(ActionResult&& result, TimePoint) override { Post(std::move(result)); }
  void Post(ActionResult result) EXCLUDES(mu_) override {
    {
      MutexLock lock(mu_);
      results_.push_back(std::move(result));
    }
    cv_.NotifyAll();
  }
  // RemoteExecutor::DrainOn: posted from the thread that drains that queue, then one
  // StepOrWake there (counted, with the thread they came from).
  void PostQuietly(ActionResult result) EXCLUDES(mu_) override {
    {
      MutexLock lock(mu_);
      ++quiet_posts_;
      quiet_thread_ = std::this_thread::get_id();
    }
    Post(std::move(result));
  }
  void StepOrWake() EXCLUDES(mu_) override {
    {
      MutexLock lock(mu_);
      ++steps_or_wakes_;
      step_thread_ = std::this_thread::get_id();
    }
    cv_.NotifyAll();
  }
  int quiet_posts() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return quiet_posts_;
  }
  std::thread::id quiet_thread() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return quiet_thread_;
  }
  std::thread::id step_thread() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return step_thread_;
  }
  // Waits until StepOrWake was called `n` times in all; false if not within kWait.
  bool WaitStepsOrWakes(int n) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return cv_.WaitFor(mu_, kWait, [&]() REQUIRES(mu_) { return steps_or_wakes_ >= n; });
  }
  int steps_or_wakes() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return steps_or_wakes_;
  }
  void PostReachability(WorkerId, bool reachable, std::optional<ActionResult> result)
      EXCLUDES(mu_) override {
    {
      MutexLock lock(mu_);
      reachability_.push_back(reachable);
      if (result) results_.push_back(std::move(*result));
    }
    cv_.NotifyAll();
  }

  // Waits until `n` results for action `id` were posted; false if not within kWait.
  bool WaitResults(ActionId id, size_t n = 1) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return cv_.WaitFor(mu_, kWait, [&]() REQUIRES(mu_) { return CountLocked(id) >= n; });
  }
  // Waits until the last reachability change posted is `reachable`.
  bool WaitReachable(bool reachable) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return cv_.WaitFor(mu_, kWait, [&]() REQUIRES(mu_) {
      return !reachability_.empty() && reachability_.back() == reachable;
    });
  }
  std::vector<ActionResult> ResultsFor(ActionId id) const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<ActionResult> out;
    for (const ActionResult& r : results_)
      if (r.id == id) out.push_back(r);
    return out;
  }
  // The ids of the results, in the order posted.
  std::vector<ActionId> Order() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<ActionId> out;
    for (const ActionResult& r : results_) out.push_back(r.id);
    return out;
  }
  std::vector<bool> reachability() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return reachability_;
  }

 private:
  size_t CountLocked(ActionId id) const REQUIRES(mu_) {
    size_t n = 0;
    for (const ActionResult& r : results_) n += r.id == id ? 1 : 0;
    return n;
  }

  mutable Mutex mu_;
  CondVar cv_;
  std::vector<ActionResult> results_ GUARDED_BY(mu_);
  std::vector<bool> reachability_ GUARDED_BY(mu_);
  int quiet_posts_ GUARDED_BY(mu_) = 0;
  int steps_or_wakes_ GUARDED_BY(mu_) = 0;
  std::thread::id quiet_thread_ GUARDED_BY(mu_);
  std::thread::id step_thread_ GUARDED_BY(mu_);
};

// The one result of action `id`: OK, carrying its own reply (the marker of its query,
// whose id the controller's Run gave it).
inline void ExpectServed(const RecordingSink& sink, ActionId id) {
  const std::vector<ActionResult> results = sink.ResultsFor(id);
  ASSERT_EQ(results.size(), 1u) << "action " << id;
  EXPECT_TRUE(results[0].status.ok()) << results[0].status.ToString();
  ASSERT_EQ(results[0].solo.size(), 1u);
  EXPECT_EQ(results[0].solo[0], PuppetWorkerExecutor::Marker(id))
      << "action " << id << " got another's reply";
}

// A completion queue drained by a thread of its own, as serve's gRPC queue thread drains
// the one it lends the executor (RemoteExecutor::DrainOn): each tag is a CallTag.
class QueueDrainer {
 public:
  QueueDrainer()
      : thread_([this] {
          void* tag = nullptr;
          bool ok = false;
          while (cq_.Next(&tag, &ok)) {
            TsanAcquire(tag);
            static_cast<grpc_protocol::CallTag*>(tag)->Proceed(ok);
          }
        }) {}
  ~QueueDrainer() { Stop(); }
  ::grpc::CompletionQueue* cq() { return &cq_; }
  std::thread::id id() const { return id_; }
  // Shuts the queue down and waits for its thread (after RemoteExecutor::LeaveQueue).
  void Stop() {
    if (!thread_.joinable()) return;
    cq_.Shutdown();
    thread_.join();
  }

 private:
  ::grpc::CompletionQueue cq_;
  std::thread thread_;
  const std::thread::id id_ = thread_.get_id();
};

// A controller's RemoteExecutor on one worker, connected and attached to a RecordingSink.
// Health checks every 50 ms, two failed ones mark the worker down; each call's deadline is
// its expected time x 2 + `action_timeout`.
struct Controller {
  // `tcp_runs`: Runs on the worker's TCP Run channel when it offers one.
  Controller(const ProfileSuite* suite, const std::string& address, Duration action_timeout,
             size_t payload_bytes = size_t{1} << 20, bool tcp_runs = false)
      : payloads(payload_bytes) {
    RemoteExecutorOptions options;
    options.addresses = {address};
    options.health_interval = Millis(50);
    options.health_timeout = Seconds(2);
    options.failures_to_down = 2;
    options.action_timeout = action_timeout;
    options.connect_timeout = Seconds(20);
    options.reconnect_backoff = Millis(100);
    options.log = [this](const std::string& line) {
      MutexLock lock(log_mu);
      log += line + "\n";
    };
    options.tcp_runs = tcp_runs;
    executor = std::make_unique<RemoteExecutor>(suite, &payloads, std::move(options));
  }
  // Connects, preloads variant 0 (recorded by the worker at once, as resident from the
  // start: the controller's health checks find it there) and attaches the sink.
  // ASSERT_NO_FATAL_FAILURE(controller.Start()).
  void Start() {
    const Status s = executor->Connect();
    ASSERT_TRUE(s.ok()) << s.ToString();
    const Status preload = executor->Preload(0, 0, {0});
    ASSERT_TRUE(preload.ok()) << preload.ToString();
    executor->Attach(&sink);
  }

  // A batch of one query (its id `id` too) on worker 0, variant 0, expected to take no
  // time.
  void Run(ActionId id) {
    const TimePoint now = clock.Now();
    std::vector<Query> queries(1);
    queries[0].id = id;
    queries[0].arrival = now;
    queries[0].deadline = now + Seconds(10);
    RunBatch run;
    run.id = id;
    run.queries = queries;
    run.rows = 1;
    run.earliest_start = now;
    (void)executor->Send(run);
  }
  void Load(ActionId id, VariantId variant) {
    (void)executor->Send(LoadVariant{id, 0, 0, variant, clock.Now(), Duration(0)});
  }
  void Unload(ActionId id, VariantId variant) {
    (void)executor->Send(UnloadVariant{id, 0, 0, variant, clock.Now()});
  }

  // Waits until `n` workers' Runs go on a TCP Run channel (greeted); false if not within
  // kWait.
  bool WaitTcpReady(int n = 1) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (executor->tcp_channels_ready() < n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  std::string Log() const EXCLUDES(log_mu) {
    MutexLock lock(log_mu);
    return log;
  }

  SteadyClock clock;
  mutable Mutex log_mu;
  std::string log GUARDED_BY(log_mu);  // what the executor logged
  PayloadStore payloads;
  RecordingSink sink;  // outlives the executor, which posts into it until destroyed
  std::unique_ptr<RemoteExecutor> executor;
};

}  // namespace sloserve::remote_test

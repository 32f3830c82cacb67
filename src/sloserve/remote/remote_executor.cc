#include "sloserve/remote/remote_executor.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "sloserve/engine/clock.h"
#include "sloserve/proto/worker_service.grpc.pb.h"
#include "sloserve/remote/wire_tensors.h"
#include "sloserve/remote/worker_channel.h"

namespace sloserve {

// Named, not anonymous: RemoteExecutor::Impl (external linkage) holds it, which GCC's
// -Wsubobject-linkage refuses in a unity build.
namespace remote_internal {

// One action's call: owned by the executor from Send until its callback has posted.
struct RemoteCall {
  ::grpc::ClientContext ctx;
  worker::RunRequest run;
  worker::LifecycleRequest lifecycle;
  worker::ActionReply reply;
  ActionId id = 0;
  WorkerId worker = 0;
  bool is_run = false;
};

}  // namespace remote_internal
using remote_internal::RemoteCall;

namespace {

// The worker lost: codes that mean the process or the link is gone, not a bad action.
bool IsWorkerLost(::grpc::StatusCode code) {
  return code == ::grpc::StatusCode::UNAVAILABLE || code == ::grpc::StatusCode::DEADLINE_EXCEEDED ||
         code == ::grpc::StatusCode::CANCELLED || code == ::grpc::StatusCode::UNKNOWN;
}

}  // namespace

struct RemoteExecutor::Impl {
  struct Worker {
    std::string address;
    std::shared_ptr<::grpc::Channel> channel;
    std::unique_ptr<worker::WorkerService::Stub> stub;
    bool up = true;         // under mu
    int failed_checks = 0;  // health thread only
    bool reads_inputs = false;
  };

  const ProfileSuite* suite;
  PayloadStore* payloads;
  RemoteExecutorOptions options;
  SteadyClock clock;
  ResultSink* sink = nullptr;
  std::vector<Worker> workers;

  mutable std::mutex mu;
  std::condition_variable cv;
  std::unordered_map<ActionId, RemoteCall*> in_flight;
  bool stopping = false;
  std::thread health_thread;

  void Log(const std::string& line) const {
    if (options.log) {
      options.log(line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

  // Posts `result` after the engine has stopped giving worker `w` queries, so the
  // re-queued queries of a lost batch go to the others.
  void PostLost(WorkerId w, ActionResult result) {
    sink->PostReachability(w, false, std::move(result));
  }

  // Marks `w` down (once) and cancels its calls in flight; their callbacks post the
  // failures. Returns whether it was up.
  bool MarkDown(WorkerId w, const std::string& why) {
    std::vector<RemoteCall*> cancel;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!workers[w].up) return false;
      workers[w].up = false;
      for (auto& [id, call] : in_flight) {
        if (call->worker == w) cancel.push_back(call);
      }
      // TryCancel under the lock: the callback needs `mu` to retire the call, so the
      // calls are still alive here.
      for (RemoteCall* c : cancel) c->ctx.TryCancel();
    }
    Log("sloserve: remote worker w" + std::to_string(w) + " (" + workers[w].address +
        ") is down: " + why + "; " + std::to_string(cancel.size()) + " action(s) failed");
    sink->PostReachability(w, false);
    return true;
  }

  void MarkUp(WorkerId w) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (workers[w].up || stopping) return;
      workers[w].up = true;
    }
    Log("sloserve: remote worker w" + std::to_string(w) + " (" + workers[w].address +
        ") is healthy again: rejoins");
    sink->PostReachability(w, true);
  }

  // One Health call; OK when the worker answers with this suite's variants.
  Status CheckHealth(WorkerId w, Duration timeout) {
    ::grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::duration_cast<std::chrono::system_clock::duration>(timeout));
    worker::HealthReply reply;
    const ::grpc::Status s = workers[w].stub->Health(&ctx, worker::HealthRequest(), &reply);
    if (!s.ok()) return UnavailableError(s.error_message());
    bool same = reply.variant_names_size() == static_cast<int>(suite->variants().size());
    for (int i = 0; same && i < reply.variant_names_size(); ++i)
      same = reply.variant_names(i) == suite->variants()[i].name;
    if (!same) {
      return FailedPreconditionError("serves suite '" + reply.suite() + "' with " +
                                     std::to_string(reply.variant_names_size()) +
                                     " variants, not this controller's '" + suite->name() + "' (" +
                                     std::to_string(suite->variants().size()) +
                                     "): start it with the same config");
    }
    workers[w].reads_inputs = reply.reads_inputs();
    return OkStatus();
  }

  void HealthLoop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      cv.wait_for(lock, options.health_interval, [this] { return stopping; });
      if (stopping) return;
      lock.unlock();
      for (WorkerId w = 0; w < workers.size(); ++w) {
        const Status s = CheckHealth(w, options.health_timeout);
        if (s.ok()) {
          workers[w].failed_checks = 0;
          MarkUp(w);
        } else if (++workers[w].failed_checks >= options.failures_to_down) {
          MarkDown(w, "health check failed " + std::to_string(workers[w].failed_checks) +
                          " times (" + s.message() + ")");
        }
      }
      lock.lock();
    }
  }

  // The callback of every call: turns the reply into the action's result and posts it.
  void Finish(RemoteCall* call, const ::grpc::Status& status) {
    ActionResult r;
    r.id = call->id;
    r.worker = call->worker;
    r.end = clock.Now();
    bool lost = false;
    if (!status.ok()) {
      r.begin = r.end;
      r.status = UnavailableError("remote worker w" + std::to_string(call->worker) + " (" +
                                  workers[call->worker].address + "): " + status.error_message());
      lost = IsWorkerLost(status.error_code());
    } else {
      const worker::ActionReply& reply = call->reply;
      r.begin = r.end - Micros(reply.duration_us());
      if (reply.code() != 0) {
        r.status = Status(static_cast<StatusCode>(reply.code()), reply.message());
      } else if (call->is_run) {
        for (int64_t us : reply.solo_us()) r.solo.push_back(Micros(us));
        for (const worker::QueryOutputs& q : reply.outputs()) {
          auto handle = payloads->Put(remote::FromWire(q.tensors()));
          if (!handle.ok()) {
            for (PayloadHandle h : r.outputs) payloads->Release(h);
            r.outputs.clear();
            r.status = handle.status();
            break;
          }
          r.outputs.push_back(*handle);
        }
      }
    }
    const WorkerId w = call->worker;
    if (lost) MarkDown(w, status.error_message());
    {
      std::lock_guard<std::mutex> lock(mu);
      in_flight.erase(call->id);
    }
    delete call;
    if (lost) {
      PostLost(w, std::move(r));
    } else {
      sink->Post(std::move(r));
    }
    std::lock_guard<std::mutex> lock(mu);
    cv.notify_all();
  }

  // Fails an action at once (its worker is down) through the same path.
  void FailNow(const WorkerAction& action, WorkerId w) {
    ActionResult r;
    r.id = IdOf(action);
    r.worker = w;
    r.begin = r.end = clock.Now();
    r.status = UnavailableError("remote worker w" + std::to_string(w) + " (" + workers[w].address +
                                ") is down");
    PostLost(w, std::move(r));
  }
};

RemoteExecutor::RemoteExecutor(const ProfileSuite* suite, PayloadStore* payloads,
                               RemoteExecutorOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->suite = suite;
  impl_->payloads = payloads;
  impl_->options = std::move(options);
  for (const std::string& address : impl_->options.addresses) {
    Impl::Worker w;
    w.address = address;
    w.channel = remote::WorkerChannel(address, impl_->options.reconnect_backoff);
    w.stub = worker::WorkerService::NewStub(w.channel);
    impl_->workers.push_back(std::move(w));
  }
}

RemoteExecutor::~RemoteExecutor() {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.stopping = true;
    for (auto& [id, call] : m.in_flight) call->ctx.TryCancel();
  }
  m.cv.notify_all();
  if (m.health_thread.joinable()) m.health_thread.join();
  std::unique_lock<std::mutex> lock(m.mu);
  m.cv.wait(lock, [&m] { return m.in_flight.empty(); });
}

Status RemoteExecutor::Connect() {
  Impl& m = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + m.options.connect_timeout;
  for (WorkerId w = 0; w < m.workers.size(); ++w) {
    for (;;) {
      Status s = m.CheckHealth(w, Seconds(1));
      if (s.ok()) break;
      if (s.code() == StatusCode::kFailedPrecondition ||
          std::chrono::steady_clock::now() >= deadline) {
        return s.WithPrefix("remote worker " + m.workers[w].address);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  m.health_thread = std::thread([&m] { m.HealthLoop(); });
  return OkStatus();
}

void RemoteExecutor::Attach(ResultSink* sink) {
  WorkerExecutor::Attach(sink);
  impl_->sink = sink;
}

Duration RemoteExecutor::Send(const WorkerAction& action) {
  Impl& m = *impl_;
  const WorkerId w = std::visit([](const auto& a) { return a.worker; }, action);
  if (w >= m.workers.size()) {
    ActionResult r;
    r.id = IdOf(action);
    r.worker = w;
    r.status = InvalidArgumentError("no remote worker w" + std::to_string(w) + " (" +
                                    std::to_string(m.workers.size()) + " configured)");
    m.sink->Post(std::move(r));
    return Duration(0);
  }
  bool up = false;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    up = m.workers[w].up;
  }
  if (!up) {
    m.FailNow(action, w);
    return Duration(0);
  }
  auto* call = new RemoteCall;
  call->id = IdOf(action);
  call->worker = w;
  Duration expected{};
  const TimePoint now = m.clock.Now();
  if (const auto* run = std::get_if<RunBatch>(&action)) {
    call->is_run = true;
    expected = run->expected;
    worker::RunRequest& req = call->run;
    req.set_action(run->id);
    req.set_worker(run->worker);
    req.set_hardware(run->hardware);
    req.set_variant(run->variant);
    req.set_rows(run->rows);
    req.set_start_within_us(run->latest_start == kTimeInfinite
                                ? -1
                                : std::max<int64_t>(0, (run->latest_start - now).count()));
    req.set_expected_us(run->expected.count());
    for (const Query& q : run->queries) {
      worker::Query* wq = req.add_queries();
      wq->set_id(q.id);
      wq->set_task(q.task);
      wq->set_app(q.app);
      wq->set_size(q.size);
      wq->set_slo_us(q.slo().count());
      wq->set_deadline_in_us((q.deadline - now).count());
      if (m.workers[w].reads_inputs && q.payload != 0) {
        if (auto set = m.payloads->Get(q.payload)) remote::ToWire(*set, wq->mutable_inputs());
      }
    }
  } else {
    const bool load = std::holds_alternative<LoadVariant>(action);
    worker::LifecycleRequest& req = call->lifecycle;
    std::visit(
        [&req](const auto& a) {
          req.set_action(a.id);
          req.set_worker(a.worker);
          req.set_hardware(a.hardware);
          req.set_variant(a.variant);
        },
        action);
    if (load) {
      expected = std::get<LoadVariant>(action).expected;
      req.set_expected_us(expected.count());
    }
  }
  call->ctx.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             std::max(expected, Duration(0)) * 2 + m.options.action_timeout));
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.in_flight.emplace(call->id, call);
  }
  auto* stub = m.workers[w].stub.get();
  auto done = [&m, call](::grpc::Status s) { m.Finish(call, s); };
  if (call->is_run) {
    stub->async()->Run(&call->ctx, &call->run, &call->reply, std::move(done));
  } else if (std::holds_alternative<LoadVariant>(action)) {
    stub->async()->Load(&call->ctx, &call->lifecycle, &call->reply, std::move(done));
  } else {
    stub->async()->Unload(&call->ctx, &call->lifecycle, &call->reply, std::move(done));
  }
  return Duration(0);
}

int RemoteExecutor::down_workers() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  int n = 0;
  for (const auto& w : impl_->workers) n += w.up ? 0 : 1;
  return n;
}

}  // namespace sloserve

#include "sloserve/remote/remote_executor.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>

#include "sloserve/core/mutex.h"
#include "sloserve/core/tsan.h"
#include "sloserve/engine/clock.h"
#include "sloserve/proto/worker_service.grpc.pb.h"
#include "sloserve/remote/reply_queue.h"
#include "sloserve/remote/wire_status.h"
#include "sloserve/remote/wire_tensors.h"
#include "sloserve/remote/worker_channel.h"
#include "sloserve/remote/worker_health.h"

namespace sloserve {

// Named, not anonymous: RemoteExecutor::Impl (external linkage) holds it, which GCC's
// -Wsubobject-linkage refuses in a unity build.
namespace remote_internal {

struct RemoteCall;

// What a finished call is handed to (the executor's Impl).
class CallOwner {
 public:
  virtual void Finish(RemoteCall* call, const ::grpc::Status& status) = 0;

 protected:
  ~CallOwner() = default;
};

// One action's call: owned by the executor's in_flight map from Send until whoever drains
// the reply queue (the driver's thread, else the queue's own) has posted its result.
struct RemoteCall final : remote::ReplyTag {
  ::grpc::ClientContext ctx;
  // In ctx's call arena: declared after ctx, so destroyed before it.
  std::unique_ptr<::grpc::ClientAsyncResponseReader<worker::ActionReply>> rpc;
  worker::RunRequest run;
  worker::LifecycleRequest lifecycle;
  worker::ActionReply reply;
  ::grpc::Status status;
  CallOwner* owner = nullptr;
  ActionId id = 0;
  WorkerId worker = 0;
  bool is_run = false;
  bool is_load = false;

  void Done(bool /*ok: always true for a unary Finish*/) override { owner->Finish(this, status); }
};

}  // namespace remote_internal
using remote_internal::RemoteCall;

struct RemoteExecutor::Impl final : remote_internal::CallOwner {
  // A worker's connection: set in the constructor, read-only after.
  struct Worker {
    std::string address;
    std::shared_ptr<::grpc::Channel> channel;
    std::unique_ptr<worker::WorkerService::Stub> stub;
    std::string instance;  // its process (HealthReply.instance); Connect, then health thread
  };
  // What the threads share about a worker (Impl::state, under mu).
  struct WorkerState {
    bool reads_inputs = false;  // written by the health thread, read by Send
    // The variants the engine believes loaded there (it ran them, or a Load succeeded;
    // not unloaded since), loaded again when the process restarts.
    std::set<VariantId> resident;
    HardwareId hardware = 0;
    int refusals = 0;  // actions refused in a row (RefusedInARow)
    // The number of its next Load/Unload (LifecycleRequest.sequence), taken in the order
    // they are sent, so the worker runs them in that order.
    uint64_t next_sequence = 1;
  };

  const ProfileSuite* suite;
  PayloadStore* payloads;
  RemoteExecutorOptions options;
  // This controller's session (random per executor): the workers scope its action ids to
  // it, so no other caller's ids collide with them (proto RunRequest.session).
  std::string session;
  SteadyClock clock;
  ResultSink* sink = nullptr;  // set by Attach, before any Send
  std::vector<Worker> workers;

  mutable Mutex mu;
  CondVar cv;                                     // notified when a call leaves in_flight
  std::vector<WorkerState> state GUARDED_BY(mu);  // by WorkerId, as workers
  // The calls sent and not yet retired by Finish, owned here; the lock keeps each alive
  // while CancelCalls or the destructor cancels it.
  std::unordered_map<ActionId, std::unique_ptr<RemoteCall>> in_flight GUARDED_BY(mu);
  std::unique_ptr<remote::WorkerHealth> health;
  // Ids of the Loads sent to a restarted worker (health thread), apart from the engine's.
  static constexpr ActionId kReloadActions = ActionId{1} << 62;
  ActionId next_reload GUARDED_BY(mu) = 0;
  // The checks start once connected and attached.
  bool connected GUARDED_BY(mu) = false;
  bool attached GUARDED_BY(mu) = false;
  bool health_started GUARDED_BY(mu) = false;
  // Last member: destroyed first, delivering what is left while the rest is alive.
  std::unique_ptr<remote::ReplyQueue> replies = std::make_unique<remote::ReplyQueue>();

  void StartHealthWhenReady() EXCLUDES(mu) {
    {
      MutexLock lock(mu);
      if (!connected || !attached || health_started) return;
      health_started = true;
    }
    health->Start();
  }

  // Worker w's calls in flight cancelled (WorkerHealth's CancelCalls).
  size_t CancelCalls(WorkerId w) EXCLUDES(mu) {
    MutexLock lock(mu);
    return remote::CancelCallsOf(in_flight, w);
  }

  // One Health call; OK when the worker answers with this suite's variants.
  Status CheckHealth(WorkerId w, Duration timeout) EXCLUDES(mu) {
    // What the engine believed resident before asking (ReconcileResidents).
    std::set<VariantId> resident_before;
    {
      MutexLock lock(mu);
      resident_before = state[w].resident;
    }
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
    // A worker holding as many actions as it accepts refuses every new one: not healthy.
    if (reply.max_pending_actions() > 0 && reply.pending_actions() >= reply.max_pending_actions()) {
      return UnavailableError("holds " + std::to_string(reply.pending_actions()) +
                              " pending actions, its limit: it refuses new ones");
    }
    {
      MutexLock lock(mu);
      state[w].reads_inputs = reply.reads_inputs();
    }
    if (!workers[w].instance.empty() && reply.instance() != workers[w].instance) {
      // A new process holds none of the variants the engine believes loaded there: keep it
      // out until they are loaded again.
      health->MarkDown(w, "restarted (a new worker process)");
      {
        // The new process knows no session: its numbering of ours starts at 1 (a number
        // lost in transit to a live process is a gap the worker skips after a wait).
        MutexLock lock(mu);
        state[w].next_sequence = 1;
      }
      RETURN_IF_ERROR(LoadResidentAgain(w, reply));
    } else if (!workers[w].instance.empty()) {
      RETURN_IF_ERROR(ReconcileResidents(w, reply, resident_before));
    }
    workers[w].instance = reply.instance();
    return OkStatus();
  }

  // The same process no longer holds variants the engine believes resident there (e.g.
  // another client unloaded them): it is marked down and they are loaded again before
  // it rejoins. Only variants resident both before the check was sent and now count: one
  // loaded meanwhile may be missing from the answer, one unloaded meanwhile is not
  // resident any more.
  Status ReconcileResidents(WorkerId w, const worker::HealthReply& reply,
                            const std::set<VariantId>& resident_before) EXCLUDES(mu) {
    std::set<VariantId> missing;
    HardwareId hardware = 0;
    {
      MutexLock lock(mu);
      for (VariantId v : resident_before) {
        if (state[w].resident.count(v) != 0) missing.insert(v);
      }
      hardware = state[w].hardware;
    }
    for (uint32_t v : reply.loaded_variants()) missing.erase(v);
    if (missing.empty()) return OkStatus();
    std::string names;
    for (VariantId v : missing) names += (names.empty() ? "" : ", ") + suite->variants()[v].name;
    health->MarkDown(w, "no longer holds resident variant(s) " + names);
    names.clear();
    RETURN_IF_ERROR(LoadNow(w, hardware, missing, " again", /*at_start=*/false, &names));
    health->Log("sloserve: remote worker w" + std::to_string(w) + " (" + workers[w].address +
                ") lost resident variant(s): loaded " + names + " again");
    return OkStatus();
  }

  // Loads the worker's resident variants on its new process (one Load call each, with the
  // action timeout), those it has not loaded yet.
  Status LoadResidentAgain(WorkerId w, const worker::HealthReply& reply) EXCLUDES(mu) {
    std::set<VariantId> load;
    HardwareId hardware = 0;
    {
      MutexLock lock(mu);
      load = state[w].resident;
      hardware = state[w].hardware;
    }
    for (uint32_t v : reply.loaded_variants()) load.erase(v);
    std::string names;
    RETURN_IF_ERROR(LoadNow(w, hardware, load, " again", /*at_start=*/false, &names));
    health->Log("sloserve: remote worker w" + std::to_string(w) + " (" + workers[w].address +
                ") restarted: loaded its " + std::to_string(load.size()) +
                " resident variant(s) again" + (names.empty() ? "" : " (" + names + ")"));
    return OkStatus();
  }

  // One blocking Load call per variant on worker w (ids apart from the engine's, the action
  // timeout each); the names loaded go to `names`. Errors say "loading NAME<what>".
  Status LoadNow(WorkerId w, HardwareId hardware, const std::set<VariantId>& load,
                 const std::string& what, bool at_start, std::string* names) EXCLUDES(mu) {
    for (VariantId v : load) {
      // The engine's Load deadline: 2 x the profile's load time + the action timeout.
      const Duration expected = suite->variants()[v].load_time;
      ::grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(
                           std::max(expected, Duration(0)) * 2 + options.action_timeout));
      worker::LifecycleRequest req;
      {
        MutexLock lock(mu);
        req.set_action(kReloadActions + next_reload++);  // apart from the engine's ids
        req.set_sequence(state[w].next_sequence++);
      }
      req.set_worker(w);
      req.set_hardware(hardware);
      req.set_variant(v);
      req.set_expected_us(expected.count());
      req.set_at_start(at_start);
      req.set_session(session);
      worker::ActionReply ack;
      const ::grpc::Status s = workers[w].stub->Load(&ctx, req, &ack);
      const std::string& name = suite->variants()[v].name;
      if (!s.ok()) return UnavailableError("loading " + name + what + ": " + s.error_message());
      if (ack.code() != 0) {
        return remote::FromWireCode(ack.code(), ack.message()).WithPrefix("loading " + name + what);
      }
      *names += (names->empty() ? "" : ", ") + name;
      MutexLock lock(mu);
      state[w].resident.insert(v);
      state[w].hardware = hardware;
    }
    return OkStatus();
  }

  // Every call's end (on the driver's thread in its wait, or the reply queue's): turns the reply
  // into the action's result and posts it.
  void Finish(RemoteCall* call, const ::grpc::Status& status) EXCLUDES(mu) override {
    ActionResult r;
    r.id = call->id;
    r.worker = call->worker;
    r.end = clock.Now();
    bool lost = false;
    if (!status.ok()) {
      r.begin = r.end;
      r.status = UnavailableError("remote worker w" + std::to_string(call->worker) + " (" +
                                  workers[call->worker].address + "): " + status.error_message());
      lost = remote::IsWorkerLost(status.error_code());
    } else {
      const worker::ActionReply& reply = call->reply;
      r.begin = r.end - Micros(reply.duration_us());
      if (reply.code() != 0) {
        r.status = remote::FromWireCode(reply.code(), reply.message());
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
    if (call->is_load && r.status.ok()) {
      MutexLock lock(mu);
      state[w].resident.insert(call->lifecycle.variant());
      state[w].hardware = call->lifecycle.hardware();
    }
    if (lost) health->MarkDown(w, status.error_message());
    if (const int n = RefusedInARow(w, status); n > 0) {
      health->MarkDown(w, "refused " + std::to_string(n) +
                              " actions in a row (last: " + status.error_message() + ")");
    }
    if (lost) {
      health->PostLost(w, std::move(r));
    } else {
      sink->Post(std::move(r));
    }
    // Retired last, under the lock the destructor waits on: once it sees no call in
    // flight, no reply touches the executor any more. Destroyed outside the lock.
    std::unique_ptr<RemoteCall> retired;
    {
      MutexLock lock(mu);
      if (auto it = in_flight.find(call->id); it != in_flight.end()) {
        retired = std::move(it->second);
        in_flight.erase(it);
      }
      cv.NotifyAll();
    }
  }

  // Counts the worker's refusals in a row (the call answered with RESOURCE_EXHAUSTED,
  // ALREADY_EXISTS or INVALID_ARGUMENT: it will not run what it is sent); a reached
  // kRefusalsToDown returns the count (and starts it again), so the worker is marked down
  // as a fault instead of failing every batch while counted up. Else 0.
  static constexpr int kRefusalsToDown = 3;
  int RefusedInARow(WorkerId w, const ::grpc::Status& status) EXCLUDES(mu) {
    const auto code = status.error_code();
    const bool refused = code == ::grpc::StatusCode::RESOURCE_EXHAUSTED ||
                         code == ::grpc::StatusCode::ALREADY_EXISTS ||
                         code == ::grpc::StatusCode::INVALID_ARGUMENT;
    MutexLock lock(mu);
    int& n = state[w].refusals;
    n = refused ? n + 1 : 0;
    if (n < kRefusalsToDown) return 0;
    const int reached = n;
    n = 0;
    return reached;
  }

  // Fails an action at once (its worker is down) through the same path.
  void FailNow(const WorkerAction& action, WorkerId w) {
    ActionResult r;
    r.id = IdOf(action);
    r.worker = w;
    r.begin = r.end = clock.Now();
    r.status = UnavailableError("remote worker w" + std::to_string(w) + " (" + workers[w].address +
                                ") is down");
    health->PostLost(w, std::move(r));
  }
};

RemoteExecutor::RemoteExecutor(const ProfileSuite* suite, PayloadStore* payloads,
                               RemoteExecutorOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->suite = suite;
  impl_->payloads = payloads;
  impl_->options = std::move(options);
  std::random_device random;
  for (int i = 0; i < 4; ++i) impl_->session += std::to_string(random()) + (i < 3 ? "-" : "");
  for (const std::string& address : impl_->options.addresses) {
    Impl::Worker w;
    w.address = address;
    w.channel = remote::WorkerChannel(address, impl_->options.reconnect_backoff,
                                      impl_->options.credentials);
    w.stub = worker::WorkerService::NewStub(w.channel);
    impl_->workers.push_back(std::move(w));
  }
  Impl& m = *impl_;
  {
    MutexLock lock(m.mu);
    m.state.resize(m.workers.size());
  }
  std::vector<std::string> names;
  for (WorkerId w = 0; w < m.workers.size(); ++w) {
    names.push_back("remote worker w" + std::to_string(w) + " (" + m.workers[w].address + ")");
  }
  m.health = std::make_unique<remote::WorkerHealth>(
      std::move(names),
      remote::WorkerHealthOptions{m.options.health_interval, m.options.health_timeout,
                                  m.options.failures_to_down, m.options.log},
      [&m](WorkerId w, Duration timeout) { return m.CheckHealth(w, timeout); },
      [&m](WorkerId w) { return m.CancelCalls(w); });
}

RemoteExecutor::~RemoteExecutor() {
  Impl& m = *impl_;
  m.health->Stop();
  // The driver that drained the replies is done (its thread no longer waits): the calls
  // still in flight end on the queue's own thread.
  m.replies->StartThread();
  MutexLock lock(m.mu);
  for (auto& [id, call] : m.in_flight) call->ctx.TryCancel();
  while (!m.in_flight.empty()) m.cv.Wait(m.mu);
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
  {
    MutexLock lock(m.mu);
    m.connected = true;
  }
  m.StartHealthWhenReady();
  return OkStatus();
}

Status RemoteExecutor::Preload(WorkerId worker, HardwareId hardware,
                               const std::vector<VariantId>& variants) {
  Impl& m = *impl_;
  if (worker >= m.workers.size()) {
    return InvalidArgumentError("preload: no remote worker w" + std::to_string(worker));
  }
  std::string names;
  RETURN_IF_ERROR(m.LoadNow(worker, hardware, {variants.begin(), variants.end()},
                            " (resident at start)", /*at_start=*/true, &names)
                      .WithPrefix("remote worker w" + std::to_string(worker) + " (" +
                                  m.workers[worker].address + ")"));
  m.health->Log("sloserve: remote worker w" + std::to_string(worker) + " (" +
                m.workers[worker].address +
                ") loaded the variants resident at start: " + (names.empty() ? "none" : names));
  return OkStatus();
}

ExecutorWait* RemoteExecutor::TakeWait() {
  return impl_->replies->TakeForDriver();
}

void RemoteExecutor::Attach(ResultSink* sink) {
  WorkerExecutor::Attach(sink);
  impl_->sink = sink;
  impl_->replies->StartThreadUnlessTaken();
  impl_->health->Attach(sink);
  {
    MutexLock lock(impl_->mu);
    impl_->attached = true;
  }
  impl_->StartHealthWhenReady();
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
  if (!m.health->Up(w)) {
    m.FailNow(action, w);
    return Duration(0);
  }
  auto owned = std::make_unique<RemoteCall>();
  RemoteCall* call = owned.get();
  call->id = IdOf(action);
  call->worker = w;
  Duration expected{};
  const TimePoint now = m.clock.Now();
  if (const auto* run = std::get_if<RunBatch>(&action)) {
    bool reads_inputs = false;
    {
      MutexLock lock(m.mu);
      reads_inputs = m.state[w].reads_inputs;
    }
    call->is_run = true;
    expected = run->expected;
    worker::RunRequest& req = call->run;
    req.set_session(m.session);
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
      if (reads_inputs && q.payload != 0) {
        if (auto set = m.payloads->Get(q.payload)) remote::ToWire(*set, wq->mutable_inputs());
      }
    }
  } else {
    const bool load = std::holds_alternative<LoadVariant>(action);
    worker::LifecycleRequest& req = call->lifecycle;
    req.set_session(m.session);
    std::visit(
        [&req](const auto& a) {
          req.set_action(a.id);
          req.set_worker(a.worker);
          req.set_hardware(a.hardware);
          req.set_variant(a.variant);
        },
        action);
    call->is_load = load;
    if (load) {
      expected = std::get<LoadVariant>(action).expected;
      req.set_expected_us(expected.count());
    }
  }
  call->ctx.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             std::max(expected, Duration(0)) * 2 + m.options.action_timeout));
  {
    MutexLock lock(m.mu);
    // The engine's ids are unique: a second action under one in flight is a bug there
    // (failed below; `owned` stays with this call then).
    if (m.in_flight.try_emplace(call->id, std::move(owned)).second) {
      Impl::WorkerState& wk = m.state[w];
      if (!call->is_run) call->lifecycle.set_sequence(wk.next_sequence++);
      if (const auto* run = std::get_if<RunBatch>(&action)) {
        wk.resident.insert(run->variant);  // the engine runs only what it believes loaded
        wk.hardware = run->hardware;
      } else if (const auto* unload = std::get_if<UnloadVariant>(&action)) {
        wk.resident.erase(unload->variant);
      }
    }
  }
  if (owned != nullptr) {
    ActionResult r;
    r.id = call->id;
    r.worker = w;
    r.begin = r.end = now;
    r.status = InternalError("action " + std::to_string(call->id) + " is already in flight");
    m.sink->Post(std::move(r));
    return Duration(0);
  }
  auto* stub = m.workers[w].stub.get();
  ::grpc::CompletionQueue* cq = m.replies->cq();
  call->owner = &m;
  if (call->is_run) {
    call->rpc = stub->PrepareAsyncRun(&call->ctx, call->run, cq);
  } else if (std::holds_alternative<LoadVariant>(action)) {
    call->rpc = stub->PrepareAsyncLoad(&call->ctx, call->lifecycle, cq);
  } else {
    call->rpc = stub->PrepareAsyncUnload(&call->ctx, call->lifecycle, cq);
  }
  call->rpc->StartCall();
  auto* tag = static_cast<remote::ReplyTag*>(call);
  TsanRelease(tag);  // whoever drains the reply queue reads the call and retires it (Finish)
  call->rpc->Finish(&call->reply, &call->status, tag);
  return Duration(0);
}

int RemoteExecutor::down_workers() const {
  return impl_->health->down_workers();
}

}  // namespace sloserve

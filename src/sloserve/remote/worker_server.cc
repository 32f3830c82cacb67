#include "sloserve/remote/worker_server.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>

#include "sloserve/core/declared_key.h"
#include "sloserve/core/mutex.h"
#include "sloserve/core/time.h"
#include "sloserve/engine/clock.h"
#include "sloserve/grpc/async_unary.h"
#include "sloserve/grpc/tls_credentials.h"
#include "sloserve/proto/worker_service.grpc.pb.h"
#include "sloserve/remote/action_registry.h"
#include "sloserve/remote/framed_connection.h"
#include "sloserve/remote/lifecycle_order.h"
#include "sloserve/remote/run_stream_batch.h"
#include "sloserve/remote/wire_status.h"
#include "sloserve/remote/wire_tensors.h"

namespace sloserve {

using grpc_protocol::AsyncServerState;
using grpc_protocol::UnaryCall;
using WService = worker::WorkerService::AsyncService;
using RunCall = UnaryCall<WService, worker::RunRequest, worker::ActionReply>;
using LifecycleCall = UnaryCall<WService, worker::LifecycleRequest, worker::ActionReply>;
using HealthCall = UnaryCall<WService, worker::HealthRequest, worker::HealthReply>;

Status CheckAddress(const std::string& address, bool allow_any_port) {
  const size_t colon = address.rfind(':');
  const std::optional<int64_t> port =
      colon == std::string::npos ? std::nullopt
                                 : ParseInteger(std::string_view(address).substr(colon + 1));
  if (colon == 0 || !port || *port < (allow_any_port ? 0 : 1) || *port > 65535) {
    return InvalidArgumentError("address '" + address + "': expected HOST:PORT with PORT in " +
                                (allow_any_port ? "0" : "1") + "..65535");
  }
  return OkStatus();
}

// Where a Run that came on a controller's Run stream or TCP Run channel is answered: a
// reply carrying its action id, queued on that stream or connection (any thread).
struct RunReplyTarget {
  virtual ~RunReplyTarget() = default;
  virtual void Send(worker::ActionReply reply) = 0;
};

// An action waiting for its executor result: the call to answer and what to release.
struct PendingAction {
  RunCall* run = nullptr;
  // A Run from a WorkerRunStream or WorkerTcpRun: answered by a reply carrying
  // `stream_action` on it.
  std::shared_ptr<RunReplyTarget> stream;
  uint64_t stream_action = 0;
  LifecycleCall* lifecycle = nullptr;
  std::vector<PayloadHandle> inputs;  // released when answered
  TimePoint received{};
  bool is_load = false;  // a lifecycle action: Load (else Unload)
  // A numbered lifecycle action: its end lets the session's next one start.
  std::optional<std::string> ordered_session;
};

// A lifecycle call held or ready in its session's order.
struct OrderedLifecycle {
  LifecycleCall* call = nullptr;
  bool is_load = false;
  TimePoint received{};
};

// One controller's Run stream (proto RunStream): its messages are read one at a time on
// the completion-queue thread it arrived on, each dispatched as a Run; replies are written
// one at a time in the order they come (from that thread, the timer thread or the
// executor's), queued meanwhile. Kept alive by gRPC's operations (`self`, until
// Finish is reported) and by its pending actions (a result for a stream already closed
// is dropped).
struct WorkerRunStream final : RunReplyTarget, std::enable_shared_from_this<WorkerRunStream> {
  using Rw = ::grpc::ServerAsyncReaderWriter<worker::ActionReplies, worker::RunRequests>;
  // One operation's tag, for AsyncServerThreads (CallTag).
  struct Op final : grpc_protocol::CallTag {
    WorkerRunStream* stream = nullptr;
    void (WorkerRunStream::*on)(bool) = nullptr;
    void Proceed(bool ok) override { (stream->*on)(ok); }
  };

  WorkerServer::Impl* server = nullptr;
  ::grpc::ServerCompletionQueue* cq = nullptr;
  ::grpc::ServerContext ctx;
  Rw rw{&ctx};
  worker::RunRequests in;  // the read in progress (one at a time)
  Op accepted, read, wrote, finished;
  // gRPC's operations hold the stream: set when it is requested, reset when its Finish
  // (or the request itself, at shutdown) is reported. Only the stream's queue thread
  // touches it.
  std::shared_ptr<WorkerRunStream> self;

  Mutex mu;
  worker::ActionReplies sending GUARDED_BY(mu);  // being written
  worker::ActionReplies queued GUARDED_BY(mu);   // the next write
  bool writing GUARDED_BY(mu) = false;
  // A message's Runs are being dispatched (Read): their replies wait for the next read to
  // start, so its window update leaves just before them (below).
  bool holding GUARDED_BY(mu) = false;
  bool read_done GUARDED_BY(mu) = false;  // the controller closed or cancelled it
  bool finishing GUARDED_BY(mu) = false;

  WorkerRunStream() {
    for (auto [op, on] : {std::pair{&accepted, &WorkerRunStream::Accepted},
                          {&read, &WorkerRunStream::Read},
                          {&wrote, &WorkerRunStream::Wrote},
                          {&finished, &WorkerRunStream::Finished}}) {
      op->stream = this;
      op->on = on;
    }
  }

  void Accepted(bool ok);  // below WorkerServer::Impl
  void Read(bool ok);
  void Finished(bool ok);

  // Queues a reply (any thread); dropped once the controller has gone.
  void Send(worker::ActionReply reply) EXCLUDES(mu) override {
    MutexLock lock(mu);
    if (read_done) return;
    *queued.add_replies() = std::move(reply);
    if (!writing && !holding) WriteQueued();
  }

  // Every reply queued goes out in one message, with the worker's health (below Impl).
  void WriteQueued() REQUIRES(mu);

  void Wrote(bool ok) EXCLUDES(mu) {
    MutexLock lock(mu);
    sending.clear_replies();  // the instance stays: set once (Accepted)
    if (!ok) {                // the stream is broken: nothing more goes out; the read ends too
      queued.Clear();
      ctx.TryCancel();
    }
    if (queued.replies_size() > 0) return WriteQueued();
    writing = false;
    MaybeFinish();
  }

  // Once reads have ended and no write is in progress: the one Finish.
  void MaybeFinish() REQUIRES(mu) {
    if (!read_done || writing || finishing) return;
    finishing = true;
    TsanRelease(&finished);
    rw.Finish(::grpc::Status::OK, &finished);
  }
};

// One controller's TCP Run channel (docs/remote-workers.md, "The TCP Run channel"): each
// frame is a RunRequests message, read on the connection's thread and dispatched there as
// Runs; their replies go out as ActionReplies frames, those the dispatch of one read's
// frames produced in one (as on a WorkerRunStream), later ones as they come (timer or
// executor thread). Held by the server's list until its connection has ended and by its
// pending actions.
struct WorkerTcpRun final : RunReplyTarget, std::enable_shared_from_this<WorkerTcpRun> {
  WorkerServer::Impl* server = nullptr;
  std::unique_ptr<remote::FramedConnection> conn;  // set before it starts

  Mutex mu;
  worker::ActionReplies sending GUARDED_BY(mu);  // instance set once; the replies per write
  worker::ActionReplies queued GUARDED_BY(mu);
  bool holding GUARDED_BY(mu) = false;  // a read's frames are being dispatched

  void Send(worker::ActionReply reply) EXCLUDES(mu) override {
    MutexLock lock(mu);
    *queued.add_replies() = std::move(reply);
    if (!holding) WriteQueued();
  }
  void WriteQueued() REQUIRES(mu);  // below WorkerServer::Impl
  // The channel's first frame: no replies, the worker's instance and queue fill. The
  // controller sends Runs only once it came, so a channel closed at accept (its slots
  // full) takes none with it.
  void Greet() EXCLUDES(mu);
  void OnFrame(std::string_view frame);
  // The read's frames are dispatched: what they produced goes out in one frame.
  void OnReadDone() EXCLUDES(mu) {
    MutexLock lock(mu);
    holding = false;
    WriteQueued();
  }
};

namespace {
// Set while this thread is inside the executor's Send (under send_mu): a result delivered
// from there does not start the next lifecycle action itself (it would take send_mu again).
thread_local bool in_send = false;
}  // namespace

struct WorkerServer::Impl : public ResultSink {
  Options options;
  const ProfileSuite* suite = nullptr;
  SteadyClock clock;
  std::unique_ptr<PayloadStore> payloads;
  Mutex send_mu;  // the executor's Send is called from one thread at a time
  std::unique_ptr<WorkerExecutor> executor PT_GUARDED_BY(send_mu);

  Mutex mu;
  CondVar cv;  // the timer thread's: a timer, a held lifecycle action, or Stop
  // Keyed by the worker's own ids (the executor's); emplaced in Create (limits from options).
  std::optional<remote::ActionRegistry<PendingAction>> actions;
  std::optional<remote::LifecycleOrder<OrderedLifecycle>> order;
  // Lifecycle actions whose turn has come, to be started outside send_mu (StartReady).
  Mutex ready_mu;
  std::vector<OrderedLifecycle> ready GUARDED_BY(ready_mu);
  std::set<uint32_t> loaded_variants GUARDED_BY(mu);  // Load succeeded, no Unload since
  std::string instance;  // this process, for the controller (HealthReply)
  struct Timed {
    TimePoint at;
    uint64_t seq;
    bool operator>(const Timed& o) const { return at > o.at || (at == o.at && seq > o.seq); }
  };
  std::priority_queue<Timed, std::vector<Timed>, std::greater<>> timers GUARDED_BY(mu);
  std::unordered_map<uint64_t, ActionResult> timed_results GUARDED_BY(mu);
  uint64_t seq GUARDED_BY(mu) = 0;
  bool stopping GUARDED_BY(mu) = false;
  std::thread timer_thread;
  std::atomic<int64_t> done{0};
  std::atomic<int64_t> health_checks{0};
  std::atomic<int64_t> tcp_runs_received{0};

  WService service;
  std::unique_ptr<::grpc::Server> server;
  std::vector<std::unique_ptr<::grpc::ServerCompletionQueue>> cqs;
  grpc_protocol::AsyncServerThreads threads;
  AsyncServerState state;
  HealthCall::Handler health;
  RunCall::Handler run;
  LifecycleCall::Handler load, unload;
  bool started = false;
  // TCP Run channel (Options::run_port): its listener, port and connections; past
  // kMaxTcpRuns open connections a new one is closed at once.
  static constexpr size_t kMaxTcpRuns = 64;
  remote::FramedListener tcp_listener;
  uint16_t run_port = 0;
  Mutex tcp_mu;
  std::vector<std::shared_ptr<WorkerTcpRun>> tcp_runs GUARDED_BY(tcp_mu);
  bool tcp_closed GUARDED_BY(tcp_mu) = false;
  std::chrono::steady_clock::time_point tcp_refusal_logged GUARDED_BY(tcp_mu){};

  // A controller's TCP Run channel connected (the listener's thread): ended ones are let
  // go first (their actions still hold them until answered).
  void AcceptTcpRun(int fd) EXCLUDES(tcp_mu) {
    std::vector<std::shared_ptr<WorkerTcpRun>> ended;
    MutexLock lock(tcp_mu);
    std::erase_if(tcp_runs, [&ended](const std::shared_ptr<WorkerTcpRun>& t) {
      if (!t->conn->ended()) return false;
      ended.push_back(t);
      return true;
    });
    if (tcp_closed || tcp_runs.size() >= kMaxTcpRuns) {
      close(fd);
      // Logged once per burst (a flood of connects is one line a minute).
      const auto now = std::chrono::steady_clock::now();
      if (!tcp_closed && now >= tcp_refusal_logged + std::chrono::minutes(1)) {
        tcp_refusal_logged = now;
        std::fprintf(stderr,
                     "sloserve worker: TCP Run channel: %zu connections open (the most it "
                     "takes); refusing more\n",
                     tcp_runs.size());
      }
      return;
    }
    auto t = std::make_shared<WorkerTcpRun>();
    t->server = this;
    {
      MutexLock tl(t->mu);
      t->sending.set_instance(instance);
    }
    WorkerTcpRun* raw = t.get();
    t->conn = std::make_unique<remote::FramedConnection>(
        fd, options.max_message_bytes, 4 * options.max_message_bytes,
        remote::FramedConnection::Handlers{[raw](std::string_view f) { raw->OnFrame(f); },
                                           [](const Status&) {}, [raw] { raw->OnReadDone(); }});
    tcp_runs.push_back(t);
    t->conn->Start();
    t->Greet();
  }

  // The RunStreams open now (Stop cancels them: a controller keeps its stream open), and
  // whether new ones are refused.
  Mutex streams_mu;
  std::set<WorkerRunStream*> streams GUARDED_BY(streams_mu);
  bool streams_closed GUARDED_BY(streams_mu) = false;

  // Waits for one WorkerRunStream on `cq` (unless stopping; as UnaryCall::Listen).
  void ListenStream(::grpc::ServerCompletionQueue* cq) EXCLUDES(state.mu) {
    MutexLock lock(state.mu);
    if (state.stopping) return;
    auto stream = std::make_shared<WorkerRunStream>();
    stream->server = this;
    stream->cq = cq;
    stream->self = stream;
    TsanRelease(&stream->accepted);
    service.RequestRunStream(&stream->ctx, &stream->rw, cq, cq, &stream->accepted);
  }

  // ResultSink: from Send (ProfileExecutor, under send_mu) or the executor's threads.
  // A result already due is answered here, on the thread that read the action (the
  // gRPC queue's), not handed to the timer thread: one thread wake-up less per action
  // (docs/benchmarks.md, "gRPC and remote workers").
  void PostAt(ActionResult&& result, TimePoint at) EXCLUDES(mu) override {
    if (at <= clock.Now()) return Deliver(std::move(result));
    MutexLock lock(mu);
    const uint64_t s = seq++;
    timed_results.emplace(s, std::move(result));
    timers.push({at, s});
    cv.NotifyAll();
  }
  void Post(ActionResult result) override { Deliver(std::move(result)); }

  // Holds mu except around what it calls out to (Expire, StartReady, Deliver).
  void TimerLoop() EXCLUDES(mu) {
    mu.lock();
    for (;;) {
      if (stopping) {  // Stop(): every action is answered; results still due are dropped
        for (auto& [s, result] : timed_results) {
          for (PayloadHandle h : result.outputs) payloads->Release(h);
        }
        timed_results.clear();
        mu.unlock();
        return;
      }
      if (order->AnyHeld()) {  // a gap in some session's numbers: looked at every 100 ms
        mu.unlock();
        std::vector<std::string> skipped;
        MakeReady(order->Expire(&skipped));
        for (const std::string& line : skipped)
          std::fprintf(stderr, "sloserve worker: %s\n", line.c_str());
        StartReady();
        mu.lock();
        if (stopping) continue;
      }
      const auto poll = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      if (timers.empty()) {
        if (order->AnyHeld()) {
          cv.WaitUntil(mu, poll);
        } else {
          cv.Wait(mu);
        }
        continue;
      }
      const Timed next = timers.top();
      const TimePoint now = clock.Now();
      if (next.at > now) {
        cv.WaitUntil(mu, std::min(clock.ToSteady(next.at), poll));
        continue;
      }
      timers.pop();
      ActionResult r = std::move(timed_results.at(next.seq));
      timed_results.erase(next.seq);
      mu.unlock();
      Deliver(std::move(r));
      mu.lock();
    }
  }

  void Deliver(ActionResult r) EXCLUDES(mu) {
    std::optional<PendingAction> taken = actions->Take(r.id);
    if (!taken) {  // answered already (Stop() gave up on it): drop its outputs
      for (PayloadHandle h : r.outputs) payloads->Release(h);
      return;
    }
    PendingAction& p = *taken;
    for (PayloadHandle h : p.inputs) payloads->Release(h);
    worker::ActionReply streamed;
    worker::ActionReply* reply = p.stream ? &streamed
                                 : p.run  ? &p.run->response
                                          : &p.lifecycle->response;
    reply->set_code(remote::ToWireCode(r.status.code()));
    reply->set_message(r.status.message());
    reply->set_duration_us((r.end - r.begin).count());
    reply->set_waited_us(std::max<int64_t>(0, (r.begin - p.received).count()));
    if ((p.run != nullptr || p.stream) && r.status.ok()) {
      for (Duration d : r.solo) reply->add_solo_us(d.count());
      for (PayloadHandle h : r.outputs) {
        worker::QueryOutputs* out = reply->add_outputs();
        if (auto set = payloads->Get(h)) remote::ToWire(*set, out->mutable_tensors());
      }
    }
    for (PayloadHandle h : r.outputs) payloads->Release(h);
    if (p.lifecycle != nullptr && r.status.ok()) {
      MutexLock lock(mu);
      if (p.is_load) {
        loaded_variants.insert(p.lifecycle->request.variant());
      } else {
        loaded_variants.erase(p.lifecycle->request.variant());
      }
    }
    ++done;
    if (p.stream) {
      streamed.set_action(p.stream_action);
      p.stream->Send(std::move(streamed));
    } else if (p.run) {
      p.run->Reply(::grpc::Status::OK);
    } else {
      p.lifecycle->Reply(::grpc::Status::OK);
    }
    if (p.ordered_session) LifecycleEnded(*p.ordered_session);
  }

  // The session's running lifecycle action ended: its successor may start (here, unless
  // this thread is inside the executor's Send; that caller starts it after).
  void LifecycleEnded(const std::string& session) {
    MakeReady(order->Done(session));
    if (!in_send) StartReady();
  }
  void MakeReady(std::vector<OrderedLifecycle> items) {
    if (items.empty()) return;
    MutexLock lock(ready_mu);
    for (OrderedLifecycle& item : items) ready.push_back(item);
  }
  // Starts the lifecycle actions whose turn has come (one per session at a time).
  void StartReady() {
    for (;;) {
      OrderedLifecycle item;
      {
        MutexLock lock(ready_mu);
        if (ready.empty()) return;
        item = ready.front();
        ready.erase(ready.begin());
      }
      StartLifecycle(item.call, item.is_load, item.received, /*ordered=*/true);
    }
  }

  // A refusal's gRPC status: the caller sees the reason and its class.
  static ::grpc::Status Refusal(const Status& s) {
    ::grpc::StatusCode code = ::grpc::StatusCode::INTERNAL;
    switch (s.code()) {
      case StatusCode::kInvalidArgument:
        code = ::grpc::StatusCode::INVALID_ARGUMENT;
        break;
      case StatusCode::kFailedPrecondition:
        code = ::grpc::StatusCode::ALREADY_EXISTS;
        break;
      case StatusCode::kResourceExhausted:
        code = ::grpc::StatusCode::RESOURCE_EXHAUSTED;
        break;
      case StatusCode::kUnavailable:
        code = ::grpc::StatusCode::UNAVAILABLE;
        break;
      default:
        break;
    }
    return {code, s.message()};
  }

  // A refusal on a Run stream or TCP Run channel: the status a unary Run would have ended
  // with, as a reply.
  static void RefuseOnStream(RunReplyTarget* stream, uint64_t action,
                             const ::grpc::Status& status) {
    worker::ActionReply reply;
    reply.set_action(action);
    reply.set_refusal(status.error_code());
    reply.set_code(remote::ToWireCode(StatusCode::kUnavailable));
    const std::string& message = status.error_message();
    reply.set_message(message.size() > RunCall::kMaxStatusMessage
                          ? RunCall::Shortened(status).error_message()
                          : message);
    stream->Send(std::move(reply));
  }

  // Answers an action that will not run, releasing its inputs.
  void Refuse(PendingAction& p, const ::grpc::Status& status) {
    for (PayloadHandle h : p.inputs) payloads->Release(h);
    p.inputs.clear();
    if (p.stream) {
      RefuseOnStream(p.stream.get(), p.stream_action, status);
    } else if (p.run) {
      p.run->Reply(status);
    } else {
      p.lifecycle->Reply(status);
    }
  }

  // Registers the action under (session, its id) and a local id the executor sees, then
  // hands it to the executor (the result may come at once).
  // False when it was refused (answered here).
  bool Dispatch(WorkerAction action, PendingAction p, const std::string& session) {
    const ActionId theirs = IdOf(action);
    StatusOr<ActionId> local = actions->Add(session, theirs, std::move(p));
    if (!local.ok()) {
      Refuse(p, Refusal(local.status()));  // not moved from: refused
      return false;
    }
    std::visit([&local](auto& a) { a.id = *local; }, action);
    {
      MutexLock lock(send_mu);
      in_send = true;
      executor->Send(action);
      in_send = false;
    }
    StartReady();  // a lifecycle action whose predecessor ended inside Send
    return true;
  }

  void InstallHandlers() {
    health = [this](HealthCall* call) {
      call->response.set_suite(suite->name());
      for (const auto& v : suite->variants()) call->response.add_variant_names(v.name);
      call->response.set_reads_inputs(options.reads_inputs);
      call->response.set_executor(options.executor_name);
      call->response.set_instance(instance);
      {
        MutexLock lock(mu);
        for (uint32_t v : loaded_variants) call->response.add_loaded_variants(v);
      }
      call->response.set_pending_actions(static_cast<uint32_t>(actions->size()));
      call->response.set_max_pending_actions(static_cast<uint32_t>(actions->limits().max_pending));
      call->response.set_run_port(run_port);
      health_checks.fetch_add(1, std::memory_order_relaxed);
      call->Reply(::grpc::Status::OK);
    };
    run = [this](RunCall* call) { HandleRun(call->request, call, nullptr); };
    load = [this](LifecycleCall* call) { HandleLifecycle(call, true); };
    unload = [this](LifecycleCall* call) { HandleLifecycle(call, false); };
  }

  ::grpc::Status CheckIds(uint32_t hardware, uint32_t variant) const {
    if (hardware >= suite->hardware().size() || variant >= suite->variants().size()) {
      return {::grpc::StatusCode::INVALID_ARGUMENT,
              "hardware " + std::to_string(hardware) + " / variant " + std::to_string(variant) +
                  " unknown in suite '" + suite->name() + "'"};
    }
    return ::grpc::Status::OK;
  }

  // A Run's rows (and queries, each of at least a row) within what the variant can run:
  // its largest profiled batch (Options::max_rows without a profile).
  ::grpc::Status CheckRows(const worker::RunRequest& req) const {
    const int profiled = suite->MaxBatch(req.hardware(), req.variant());
    const int limit = profiled > 0 ? profiled : options.max_rows;
    if (req.rows() > limit || req.rows() < 0 || req.queries_size() > limit) {
      return {::grpc::StatusCode::INVALID_ARGUMENT,
              "a batch of " + std::to_string(req.rows()) + " rows (" +
                  std::to_string(req.queries_size()) + " queries): variant " +
                  std::to_string(req.variant()) + " runs at most " + std::to_string(limit)};
    }
    return ::grpc::Status::OK;
  }

  // A Run from a unary call (`call`) or a stream or TCP channel (`stream`, answered on it).
  void HandleRun(const worker::RunRequest& req, RunCall* call,
                 const std::shared_ptr<RunReplyTarget>& stream) {
    auto refuse = [&](const ::grpc::Status& s) {
      if (stream) return RefuseOnStream(stream.get(), req.action(), s);
      call->Reply(s);
    };
    if (auto s = CheckIds(req.hardware(), req.variant()); !s.ok()) return refuse(s);
    if (auto s = CheckRows(req); !s.ok()) return refuse(s);
    const TimePoint now = clock.Now();
    PendingAction p;
    p.run = call;
    p.stream = stream;
    p.stream_action = req.action();
    p.received = now;
    std::vector<Query> queries;
    queries.reserve(req.queries_size());
    for (const worker::Query& wq : req.queries()) {
      Query q;
      q.id = wq.id();
      q.task = wq.task();
      q.app = wq.app();
      q.size = wq.size();
      q.deadline = now + Micros(wq.deadline_in_us());
      q.arrival = q.deadline - Micros(wq.slo_us());
      if (wq.inputs_size() > 0) {
        auto handle = payloads->Put(remote::FromWire(wq.inputs()));
        if (!handle.ok()) {
          for (PayloadHandle h : p.inputs) payloads->Release(h);
          return refuse({::grpc::StatusCode::RESOURCE_EXHAUSTED, handle.status().message()});
        }
        q.payload = *handle;
        p.inputs.push_back(q.payload);
      }
      queries.push_back(q);
    }
    RunBatch a;
    a.id = req.action();
    a.worker = req.worker();
    a.hardware = req.hardware();
    a.variant = req.variant();
    a.queries = queries;
    a.rows = req.rows();
    a.earliest_start = now;
    a.latest_start =
        req.start_within_us() < 0 ? kTimeInfinite : now + Micros(req.start_within_us());
    a.expected = Micros(req.expected_us());
    (void)Dispatch(a, std::move(p), req.session());
  }

  // A numbered Load/Unload waits for its session's earlier ones (LifecycleOrder); an
  // unnumbered one (sequence 0) starts at once.
  void HandleLifecycle(LifecycleCall* call, bool is_load) {
    const worker::LifecycleRequest& req = call->request;
    const TimePoint received = clock.Now();
    if (req.sequence() == 0) return StartLifecycle(call, is_load, received, /*ordered=*/false);
    auto ready = order->Arrive(req.session(), req.sequence(), {call, is_load, received});
    if (!ready.ok()) {
      return call->Reply({::grpc::StatusCode::FAILED_PRECONDITION, ready.status().message()});
    }
    MakeReady(std::move(*ready));
    StartReady();
    if (order->AnyHeld()) {  // the timer thread looks for gaps while any is held
      MutexLock lock(mu);
      cv.NotifyAll();
    }
  }

  // Runs a lifecycle action whose turn it is; one that ends here (refused, or recorded at
  // once) lets its session's next one start.
  void StartLifecycle(LifecycleCall* call, bool is_load, TimePoint received, bool ordered) {
    const worker::LifecycleRequest& req = call->request;
    const std::string session = req.session();
    auto ended = [&] {
      if (ordered) LifecycleEnded(session);
    };
    if (auto s = CheckIds(req.hardware(), req.variant()); !s.ok()) {
      call->Reply(s);
      return ended();
    }
    if (is_load && req.at_start() && !(options.holds_model && options.holds_model(req.variant()))) {
      // Resident from the engine's start, with no cold start: nothing to emulate.
      {
        MutexLock lock(mu);
        loaded_variants.insert(req.variant());
      }
      ++done;
      call->Reply(::grpc::Status::OK);
      return ended();
    }
    PendingAction p;
    p.lifecycle = call;
    p.received = received;
    p.is_load = is_load;
    if (ordered) p.ordered_session = session;
    const TimePoint now = clock.Now();
    WorkerAction a;
    if (is_load) {
      a = LoadVariant{req.action(),  req.worker(), req.hardware(),
                      req.variant(), now,          Micros(req.expected_us())};
    } else {
      a = UnloadVariant{req.action(), req.worker(), req.hardware(), req.variant(), now};
    }
    if (!Dispatch(a, std::move(p), session)) ended();
  }
};

void WorkerRunStream::WriteQueued() {
  writing = true;
  remote::TakeBatch(queued.mutable_replies(), sending.mutable_replies());
  // What a Health reply would say of its queue (the process: set at Accepted): the
  // controller skips the check of a worker it heard this from recently.
  sending.set_pending_actions(static_cast<uint32_t>(server->actions->size()));
  sending.set_max_pending_actions(static_cast<uint32_t>(server->actions->limits().max_pending));
  TsanRelease(&wrote);
  rw.Write(sending, &wrote);
}

void WorkerTcpRun::WriteQueued() {
  while (queued.replies_size() > 0) {
    remote::TakeBatch(queued.mutable_replies(), sending.mutable_replies());
    sending.set_pending_actions(static_cast<uint32_t>(server->actions->size()));
    sending.set_max_pending_actions(static_cast<uint32_t>(server->actions->limits().max_pending));
    if (!conn->Send(sending)) queued.Clear();  // ended: the controller fails these Runs itself
  }
  sending.clear_replies();
}

void WorkerTcpRun::Greet() {
  MutexLock lock(mu);
  sending.clear_replies();
  sending.set_pending_actions(static_cast<uint32_t>(server->actions->size()));
  sending.set_max_pending_actions(static_cast<uint32_t>(server->actions->limits().max_pending));
  (void)conn->Send(sending);
}

void WorkerTcpRun::OnFrame(std::string_view frame) {
  worker::RunRequests runs;
  if (!runs.ParseFromArray(frame.data(), static_cast<int>(frame.size()))) {
    conn->Close("a frame that is not a RunRequests message");
    return;
  }
  {
    MutexLock lock(mu);
    holding = true;
  }
  server->tcp_runs_received.fetch_add(runs.runs_size(), std::memory_order_relaxed);
  const std::shared_ptr<RunReplyTarget> self_ref = shared_from_this();
  for (const worker::RunRequest& req : runs.runs()) server->HandleRun(req, nullptr, self_ref);
  // The replies wait for OnReadDone (the read's last frame dispatched).
}

void WorkerRunStream::Accepted(bool ok) {
  if (!ok) {  // the server is shutting down: no stream came
    self.reset();
    return;
  }
  server->ListenStream(cq);
  {
    MutexLock lock(mu);
    sending.set_instance(server->instance);  // every message carries it (WriteQueued)
  }
  {
    MutexLock lock(server->streams_mu);
    if (server->streams_closed) ctx.TryCancel();  // stopping: the read below fails
    server->streams.insert(this);
  }
  server->state.pending.fetch_add(1);  // AsyncServerThreads::Stop waits for its Finish
  TsanRelease(&read);
  rw.Read(&in, &read);
}

void WorkerRunStream::Read(bool ok) {
  if (!ok) {
    MutexLock lock(mu);
    read_done = true;
    MaybeFinish();
    return;
  }
  const worker::RunRequests runs = std::move(in);
  in.Clear();
  {
    MutexLock lock(mu);
    holding = true;
  }
  const std::shared_ptr<RunReplyTarget> self_ref = shared_from_this();
  for (const worker::RunRequest& req : runs.runs()) server->HandleRun(req, nullptr, self_ref);
  // The replies the dispatch produced go out in one write, and the next read starts after
  // it: gRPC sends the controller a window update when a read starts, and started before
  // the dispatch it left a dispatch's time ahead of the replies, so the controller's thread
  // often woke for it alone and again for the replies (issue 38); started after the write,
  // gRPC sends no update of its own for it (measured: 2 sendmsg per message before, 1).
  {
    MutexLock lock(mu);
    holding = false;
    if (!writing && queued.replies_size() > 0) WriteQueued();
  }
  TsanRelease(&read);
  rw.Read(&in, &read);
}

void WorkerRunStream::Finished(bool /*ok*/) {
  {
    MutexLock lock(server->streams_mu);
    server->streams.erase(this);
  }
  server->state.pending.fetch_sub(1);
  self.reset();  // may delete this (unless pending actions still hold it)
}

WorkerServer::WorkerServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WorkerServer::~WorkerServer() {
  Stop();
}

StatusOr<std::unique_ptr<WorkerServer>> WorkerServer::Create(Options options,
                                                             const ProfileSuite* suite,
                                                             MakeExecutor make_executor) {
  RETURN_IF_ERROR(CheckAddress(options.listen, /*allow_any_port=*/true));
  if (options.run_port < -1 || options.run_port > 65535) {
    return InvalidArgumentError("worker run port: must be 0..65535 (0: any free port), got " +
                                std::to_string(options.run_port));
  }
  if (options.run_port > 0 &&
      options.listen.substr(options.listen.rfind(':') + 1) == std::to_string(options.run_port)) {
    return InvalidArgumentError("worker: --run-port " + std::to_string(options.run_port) +
                                " is --listen's port too; give the TCP Run channel its own");
  }
  if (options.run_port >= 0 && options.tls.enabled()) {
    return InvalidArgumentError(
        "worker: the TCP Run channel (--run-port) is plaintext; it cannot be combined with "
        "TLS (--tls-cert): a TLS worker's Runs go on its gRPC Run stream");
  }
  if (options.threads < 1 || options.threads > 256) {
    return InvalidArgumentError("worker threads: must be 1..256, got " +
                                std::to_string(options.threads));
  }
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->suite = suite;
  std::random_device random;
  impl->instance =
      std::to_string(getpid()) + "-" + std::to_string(random()) + "-" + std::to_string(random());
  impl->actions.emplace(remote::ActionRegistry<PendingAction>::Limits{
      impl->options.max_pending_actions, impl->options.max_session_actions});
  impl->order.emplace(impl->options.sequence_gap_wait);
  impl->payloads = std::make_unique<PayloadStore>(impl->options.payload_bytes);
  impl->executor = make_executor(*suite, impl->payloads.get());
  {
    MutexLock lock(impl->send_mu);
    impl->executor->Attach(impl.get());
  }
  impl->InstallHandlers();
  return std::unique_ptr<WorkerServer>(new WorkerServer(std::move(impl)));
}

StatusOr<uint16_t> WorkerServer::Start() {
  Impl& m = *impl_;
  int bound = 0;
  std::shared_ptr<::grpc::ServerCredentials> credentials;
  if (m.options.tls.enabled()) {
    ASSIGN_OR_RETURN(credentials,
                     grpc_protocol::ServerTlsCredentials(
                         m.options.tls, {"--tls-cert", "--tls-key", "--tls-client-ca"}));
  }
  // The TCP Run channel first: a port it cannot have fails the start before the gRPC
  // server runs (its listener stops with the server object).
  if (m.options.run_port >= 0) {
    ASSIGN_OR_RETURN(m.run_port, m.tcp_listener.Listen(remote::HostOf(m.options.listen),
                                                       static_cast<uint16_t>(m.options.run_port),
                                                       [&m](int fd) { m.AcceptTcpRun(fd); }));
  }
  m.server =
      grpc_protocol::StartAsyncServer(m.options.listen, m.options.max_message_bytes, &m.service,
                                      m.options.threads, &m.cqs, &bound, credentials);
  if (m.server == nullptr) {
    m.tcp_listener.Stop();
    return UnavailableError("worker: cannot listen on " + m.options.listen);
  }
  m.started = true;
  m.timer_thread = std::thread([&m] { m.TimerLoop(); });
  for (auto& cq : m.cqs) {
    HealthCall::Listen(&m.service, cq.get(), &WService::RequestHealth, &m.health, &m.state);
    RunCall::Listen(&m.service, cq.get(), &WService::RequestRun, &m.run, &m.state);
    LifecycleCall::Listen(&m.service, cq.get(), &WService::RequestLoad, &m.load, &m.state);
    LifecycleCall::Listen(&m.service, cq.get(), &WService::RequestUnload, &m.unload, &m.state);
    m.ListenStream(cq.get());
  }
  m.threads.Run(m.cqs);
  return static_cast<uint16_t>(bound);
}

void WorkerServer::Stop() {
  Impl& m = *impl_;
  if (!m.started) return;
  m.started = false;
  // Pending actions are answered by their results (the timer thread still runs) within
  // the grace; the rest are answered now, so a caller that sent actions whose results
  // are hours away (or never come) cannot keep the worker from exiting.
  m.actions->Close();
  m.tcp_listener.Stop();
  for (OrderedLifecycle& held : m.order->TakeAll()) {  // waiting for a predecessor
    held.call->Reply({::grpc::StatusCode::UNAVAILABLE, "worker is stopping"});
  }
  if (!m.actions->WaitEmptyFor(m.options.stop_grace)) {
    for (PendingAction& p : m.actions->TakeAll()) {
      m.Refuse(p, {::grpc::StatusCode::UNAVAILABLE,
                   "worker stopped before the action finished (its stop grace ran out)"});
    }
  }
  {
    // Every action is answered: the controllers' streams are closed (they stay open
    // otherwise, and Server::Shutdown would wait for them).
    MutexLock lock(m.streams_mu);
    m.streams_closed = true;
    for (WorkerRunStream* stream : m.streams) stream->ctx.TryCancel();
  }
  std::vector<std::shared_ptr<WorkerTcpRun>> tcp_runs;
  {
    MutexLock lock(m.tcp_mu);
    m.tcp_closed = true;
    tcp_runs.swap(m.tcp_runs);
  }
  for (const auto& t : tcp_runs) t->conn->Close("the worker is stopping");
  tcp_runs.clear();  // joins their threads (answered actions hold none of them any more)
  m.threads.Stop(m.server.get(), &m.state, m.cqs, std::chrono::seconds(1));
  {
    MutexLock lock(m.mu);
    m.stopping = true;
    m.cv.NotifyAll();
  }
  m.timer_thread.join();
  m.executor.reset();  // a real executor finishes its actions first
  m.server.reset();
  m.cqs.clear();
}

int64_t WorkerServer::actions_done() const {
  return impl_->done.load();
}

int64_t WorkerServer::tcp_runs_received() const {
  return impl_->tcp_runs_received.load(std::memory_order_relaxed);
}

uint16_t WorkerServer::run_port() const {
  return impl_->run_port;
}

int64_t WorkerServer::health_checks() const {
  return impl_->health_checks.load(std::memory_order_relaxed);
}

}  // namespace sloserve

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
#include "sloserve/remote/call_round.h"
#include "sloserve/remote/framed_connection.h"
#include "sloserve/remote/reply_queue.h"
#include "sloserve/remote/run_stream_batch.h"
#include "sloserve/remote/wire_status.h"
#include "sloserve/remote/wire_tensors.h"
#include "sloserve/remote/worker_channel.h"
#include "sloserve/remote/worker_health.h"
#include "sloserve/remote/worker_set.h"

namespace sloserve {

// Named, not anonymous: RemoteExecutor::Impl (external linkage) holds it, which GCC's
// -Wsubobject-linkage refuses in a unity build.
namespace remote_internal {

struct RemoteCall;
struct RunStream;
struct TcpRunChannel;

// Set while a thread delivers an event of a call started on a queue another component's
// thread drains (RemoteExecutor::DrainOn): its results are posted without waking the
// driver's thread (ResultSink::PostQuietly), and handled once the event is delivered
// (CallOwner::Delivered: ResultSink::StepOrWake).
thread_local bool t_deliver_quietly = false;
thread_local bool t_posted_quietly = false;

// What a finished call is handed to (the executor's Impl).
class CallOwner {
 public:
  virtual void Finish(RemoteCall* call, const ::grpc::Status& status) = 0;
  enum class StreamOp { kRead, kWrote, kFinished };
  virtual void OnStream(RunStream* stream, StreamOp op, bool ok) = 0;
  // After an event of a call on a drained-elsewhere queue (on that queue's thread).
  virtual void Delivered() = 0;

  // Delivers one event (`deliver`) of a call started on the shared queue when `shared`.
  template <class F>
  static void Deliver(CallOwner* owner, bool shared, F&& deliver) {
    t_deliver_quietly = shared;
    deliver();
    t_deliver_quietly = false;
    if (shared) owner->Delivered();
  }

 protected:
  ~CallOwner() = default;
};

// One action's call: owned by the executor's in_flight map from Send until whoever drains
// the reply queue (the driver's thread, else the queue's own) has posted its result.
struct RemoteCall final : remote::ReplyTag {
  // Keeps the worker's channel alive while the call is (an elastic slot may be freed or
  // given another address meanwhile). First member: destroyed last.
  std::shared_ptr<worker::WorkerService::Stub> stub;
  ::grpc::ClientContext ctx;
  // In ctx's call arena: declared after ctx, so destroyed before it.
  std::unique_ptr<::grpc::ClientAsyncResponseReader<worker::ActionReply>> rpc;
  // A Run goes on its worker's Run stream (not a call of its own: ctx and rpc unused),
  // answered by the reply carrying its id, or failed when the stream ends; it fails the
  // stream (and so the worker) when no reply came by `deadline`.
  RunStream* stream = nullptr;
  // Or on its worker's TCP Run channel (the same, with the channel for the stream).
  TcpRunChannel* tcp = nullptr;
  bool answered = false;  // its reply came (a second one for its id is ignored)
  std::chrono::steady_clock::time_point deadline;
  worker::RunRequest run;
  worker::LifecycleRequest lifecycle;
  worker::ActionReply reply;
  ::grpc::Status status;
  CallOwner* owner = nullptr;
  ActionId id = 0;
  WorkerId worker = 0;
  bool is_run = false;
  bool is_load = false;
  bool shared = false;  // started on the queue of RemoteExecutor::DrainOn

  void Done(bool /*ok: always true for a unary Finish*/) override {
    // Finish retires the call: what the delivery needs after it is copied first.
    CallOwner* o = owner;
    CallOwner::Deliver(o, shared, [&] { o->Finish(this, status); });
  }
};

// A worker's Run stream (proto RunStream; docs/remote-workers.md "The Run stream"): one
// per worker connection, opened by the first Run sent to it and replaced once it ends.
// Requests are written one at a time in the order sent (queued meanwhile), replies are
// read one at a time; every event comes on the reply queue. Owned by Impl::streams until
// its Finish is reported. Fields after `status`: under Impl::mu.
struct RunStream {
  using Rw = ::grpc::ClientAsyncReaderWriter<worker::RunRequests, worker::ActionReplies>;
  struct Op final : remote::ReplyTag {
    RunStream* stream = nullptr;
    CallOwner::StreamOp op{};
    void Done(bool ok) override {
      // The stream may be gone after its Finish is handled: copied first.
      CallOwner* o = stream->owner;
      RunStream* s = stream;
      const CallOwner::StreamOp which = op;
      CallOwner::Deliver(o, s->shared, [&] { o->OnStream(s, which, ok); });
    }
  };
  // Keeps the worker's channel alive while the stream is (first member: destroyed last).
  std::shared_ptr<worker::WorkerService::Stub> stub;
  ::grpc::ClientContext ctx;
  std::unique_ptr<Rw> rw;  // in ctx's call arena: destroyed before it
  CallOwner* owner = nullptr;
  WorkerId worker = 0;
  bool shared = false;       // on the queue of RemoteExecutor::DrainOn (set before its first op)
  worker::ActionReplies in;  // the read in progress
  ::grpc::Status status;     // Finish's
  Op read, wrote, finished;

  worker::RunRequests sending;  // being written
  worker::RunRequests queued;   // the next write: every Run sent meanwhile
  bool writing = false;
  // A read is pending. Only while Runs are on the stream (and from its first write): a
  // read started with nothing to wait for makes gRPC send the worker a WINDOW_UPDATE at
  // once (one more write here, one more wake-up there, per reply); started just after
  // the next Run's write, gRPC sends no update of its own for it (one sendmsg per Run,
  // not two: issue 38).
  bool reading = false;
  bool started = false;    // the first write went out (with the call's metadata)
  bool cancelled = false;  // Cancel(): the read is kept pending until it fails
  size_t calls = 0;        // Runs on it not yet answered
  bool read_done = false;  // the read failed: the stream has ended
  bool finishing = false;  // Finish called
  // Set when the executor cancels it for a passed deadline: what its calls fail with.
  std::string deadline_passed;

  RunStream() {
    for (auto [op, which] : {std::pair{&read, CallOwner::StreamOp::kRead},
                             {&wrote, CallOwner::StreamOp::kWrote},
                             {&finished, CallOwner::StreamOp::kFinished}}) {
      op->stream = this;
      op->op = which;
    }
  }
  // Usable for new requests: not ended nor being cancelled.
  bool open() const { return !read_done && !finishing && deadline_passed.empty(); }
  void WriteQueued() {
    writing = true;
    remote::TakeBatch(queued.mutable_runs(), sending.mutable_runs());
    void* tag = remote::ReplyTag::Of(&wrote);
    TsanRelease(tag);
    rw->Write(sending, tag);
  }
  void StartRead() {
    if (reading) return;
    reading = true;
    void* tag = remote::ReplyTag::Of(&read);
    TsanRelease(tag);
    rw->Read(&in, tag);
  }
  // Cancels it; a read (pending, or started here) then fails, which ends the stream.
  void Cancel() {
    cancelled = true;
    ctx.TryCancel();
    if (started) StartRead();
  }
};

// A worker's TCP Run channel (docs/remote-workers.md, "The TCP Run channel"): its Runs
// framed on TCP instead of on its Run stream (RemoteExecutorOptions::tcp_runs), at a third
// of a stream message's CPU on the worker. Opened by the thread that checks health once a
// check shows the worker's run_port; a Run goes on it while it is open (else on the Run
// stream). Its connection's thread reads the replies and handles them as the reply queue's
// drainer does a stream's. Owned by Impl::tcp_channels until it has ended and is reaped.
// Fields after `conn`: under Impl::mu.
struct TcpRunChannel {
  WorkerId worker = 0;
  std::unique_ptr<remote::FramedConnection> conn;
  bool ready = false;        // the worker's first frame came: Runs may go on it
  bool end_handled = false;  // its end failed its calls: nothing more goes on it
  // Set when the executor closes it for a passed deadline: what its calls fail with.
  std::string deadline_passed;
};

}  // namespace remote_internal
using remote_internal::RemoteCall;
using remote_internal::RunStream;
using remote_internal::TcpRunChannel;

struct RemoteExecutor::Impl final : remote_internal::CallOwner {
  using Stub = worker::WorkerService::Stub;
  // What only the thread that checks the workers knows about one (Connect, then the
  // health thread; no lock).
  struct Worker {
    std::string instance;  // its process (HealthReply.instance)
    int skipped = 0;       // checks skipped in a row since its last Health call
  };
  // A worker heard on its Run stream within a health interval is not asked again, but at
  // least every kFullCheckEvery-th round is: a Health reply also carries its resident
  // variants (ReconcileResidents) and whether it reads inputs, which Run replies do not.
  static constexpr int kFullCheckEvery = 5;
  // A TCP Run channel's frame limit: the gRPC channels' message limit (worker_channel.cc).
  static constexpr size_t kMaxTcpFrameBytes = size_t{64} << 20;
  static constexpr auto kTcpRetry = std::chrono::seconds(5);
  // What the threads share about a worker (Impl::state, under mu).
  struct WorkerState {
    // Its connection. A fixed set: set in the constructor. An elastic set: changed by
    // Refresh (Connect, then the health thread); empty address and null stub: a free
    // slot. Each call holds its own reference to the stub (RemoteCall::stub).
    std::string address;
    std::shared_ptr<Stub> stub;
    // Elastic: left the set; its calls finish before the slot is freed.
    bool draining = false;
    // Elastic: a new address, loaded with the slot's residents at its first good check
    // before it is used (nothing is sent to it while joining).
    bool joining = false;
    bool reads_inputs = false;  // written by the health thread, read by Send
    // The variants the engine believes loaded there (it ran them, or a Load succeeded;
    // not unloaded since), loaded again when the process restarts.
    std::set<VariantId> resident;
    HardwareId hardware = 0;
    int refusals = 0;  // actions refused in a row (RefusedInARow)
    // The number of its next Load/Unload (LifecycleRequest.sequence), taken in the order
    // they are sent, so the worker runs them in that order.
    uint64_t next_sequence = 1;
    // Its Run stream now (owned by Impl::streams); null until the next Run opens one.
    RunStream* stream = nullptr;
    // Its TCP Run channel now (owned by Impl::tcp_channels), and the port its last Health
    // reply offered (0: none).
    TcpRunChannel* tcp = nullptr;
    uint32_t run_port = 0;
    bool tcp_logged = false;  // why it has none was logged (once per address)
    // After a failed connect, the next attempt waits until then (kTcpRetry): a port that
    // drops connections must not hold up every round of health checks.
    std::chrono::steady_clock::time_point tcp_retry_at{};
    // The last Run-stream message from it (OnReply): when, from which process, and whether
    // its queue was full then (ActionReplies' health fields).
    TimePoint heard{};
    std::string heard_instance;
    bool heard_full = true;
  };

  const ProfileSuite* suite;
  PayloadStore* payloads;
  RemoteExecutorOptions options;
  // This controller's session (random per executor): the workers scope its action ids to
  // it, so no other caller's ids collide with them (proto RunRequest.session).
  std::string session;
  SteadyClock clock;
  ResultSink* sink = nullptr;  // set by Attach, before any Send
  // By WorkerId; the number of workers (an elastic set's slots) is fixed in the
  // constructor.
  std::vector<Worker> workers;

  mutable Mutex mu;
  CondVar cv;                                     // notified when a call leaves in_flight
  std::vector<WorkerState> state GUARDED_BY(mu);  // by WorkerId, as workers
  // The calls sent and not yet retired by Finish, owned here; the lock keeps each alive
  // while CancelCalls or the destructor cancels it.
  std::unordered_map<ActionId, std::unique_ptr<RemoteCall>> in_flight GUARDED_BY(mu);
  // Every Run stream not yet ended and reported (a worker's current one, and ones ending).
  std::unordered_map<RunStream*, std::unique_ptr<RunStream>> streams GUARDED_BY(mu);
  // Every TCP Run channel opened and not yet reaped (TcpRunChannel).
  std::vector<std::unique_ptr<TcpRunChannel>> tcp_channels GUARDED_BY(mu);
  std::unique_ptr<remote::WorkerHealth> health;
  // The Health calls' queue: one round at a time (CheckHealth), from Connect and then the
  // health thread.
  ::grpc::CompletionQueue health_cq;
  // Ids of the Loads sent to a restarted worker (health thread), apart from the engine's.
  static constexpr ActionId kReloadActions = ActionId{1} << 62;
  ActionId next_reload GUARDED_BY(mu) = 0;
  // The checks start once connected and attached.
  bool connected GUARDED_BY(mu) = false;
  bool attached GUARDED_BY(mu) = false;
  bool health_started GUARDED_BY(mu) = false;
  // Elastic set (Connect, then the health thread; no lock): its source, the source's last
  // error and the addresses already logged as waiting for a slot.
  std::unique_ptr<remote::WorkerSetSource> source;
  std::string source_error;
  std::set<std::string> no_slot_logged;
  // DrainOn's queue (another component's thread drains it), or null: calls and streams
  // are started there while it is set, else on `replies`.
  ::grpc::CompletionQueue* shared_cq GUARDED_BY(mu) = nullptr;
  // Last member: destroyed first, delivering what is left while the rest is alive.
  std::unique_ptr<remote::ReplyQueue> replies = std::make_unique<remote::ReplyQueue>();

  // Where a call or stream is started now.
  ::grpc::CompletionQueue* CallQueue() REQUIRES(mu) {
    return shared_cq != nullptr ? shared_cq : replies->cq();
  }

  // A result: on a thread delivering from the shared queue, posted quietly and handled
  // once its event is delivered (Delivered); else posted (waking the driver's thread).
  void PostResult(ActionResult r) {
    if (remote_internal::t_deliver_quietly) {
      remote_internal::t_posted_quietly = true;
      sink->PostQuietly(std::move(r));
    } else {
      sink->Post(std::move(r));
    }
  }
  void Delivered() override {
    if (!remote_internal::t_posted_quietly) return;
    remote_internal::t_posted_quietly = false;
    sink->StepOrWake();
  }

  // Calls and streams still on the shared queue.
  size_t OnSharedQueue() const REQUIRES(mu) {
    size_t n = 0;
    for (const auto& [id, call] : in_flight) n += call->shared ? 1 : 0;
    for (const auto& [raw, stream] : streams) n += raw->shared ? 1 : 0;
    return n;
  }

  std::string AddressOf(WorkerId w) const EXCLUDES(mu) {
    MutexLock lock(mu);
    return state[w].address;
  }
  static std::string NameOf(WorkerId w, const std::string& address) {
    return "remote worker w" + std::to_string(w) + " (" +
           (address.empty() ? "free slot" : address) + ")";
  }
  std::string NameOf(WorkerId w) const EXCLUDES(mu) { return NameOf(w, AddressOf(w)); }

  // Elastic: the set the source gives now (Connect, then the health thread before every
  // round of checks), applied to the slots. Returns the source's error (the set is kept).
  Status Refresh() EXCLUDES(mu) {
    Status read = source->Refresh(std::chrono::steady_clock::now());
    if (!read.ok()) {
      if (read.message() != source_error)
        health->Log("sloserve: worker set: " + read.message() + " (keeping the current set)");
      source_error = read.message();
    } else {
      source_error.clear();
    }
    ApplyWanted();
    return read;
  }

  // Drains the slots whose address left, frees drained ones without calls in flight, and
  // gives each new address a free slot.
  void ApplyWanted() EXCLUDES(mu) {
    const std::vector<std::string>& wanted = source->addresses();
    const std::set<std::string> want(wanted.begin(), wanted.end());
    std::set<std::string> held;
    for (WorkerId w = 0; w < workers.size(); ++w) {
      std::string address;
      bool draining = false;
      {
        MutexLock lock(mu);
        address = state[w].address;
        draining = state[w].draining;
      }
      if (address.empty()) continue;
      const bool wanted_now = want.count(address) != 0;
      if (!wanted_now && !draining) {
        // The engine is told first: from here on it sends w nothing (an action it sent
        // before it knew ends on the worker, or fails once if the slot is already free).
        if (!health->MarkDown(w, "left the worker set: drained (its calls in flight finish)",
                              /*cancel=*/false)) {
          health->Log("sloserve: " + NameOf(w, address) + " left the worker set");
        }
      } else if (wanted_now && draining) {
        health->Log("sloserve: " + NameOf(w, address) + " is back in the worker set");
      }
      bool free_now = false;
      {
        MutexLock lock(mu);
        state[w].draining = !wanted_now;
        if (state[w].draining && CallsOf(w) == 0) {
          free_now = true;
          Vacate(w);
        } else {
          held.insert(address);
        }
      }
      if (free_now) {
        workers[w].instance.clear();
        health->Rename(w, NameOf(w, ""));
        health->Log("sloserve: " + NameOf(w, address) + " drained: its slot is free");
      }
    }
    for (const std::string& address : wanted) {
      if (held.count(address) != 0) continue;
      // Only Refresh gives slots addresses (Connect, then the health thread), so a free
      // slot found here stays free while the channel is made outside the lock.
      WorkerId slot = workers.size();
      {
        MutexLock lock(mu);
        for (WorkerId w = 0; w < workers.size() && slot == workers.size(); ++w) {
          if (state[w].address.empty()) slot = w;
        }
      }
      if (slot == workers.size()) {
        if (no_slot_logged.insert(address).second) {
          health->Log("sloserve: worker set: no free slot for " + address + " (all " +
                      std::to_string(workers.size()) +
                      " in use: server.remote_worker_slots); it waits for one");
        }
        continue;
      }
      std::shared_ptr<Stub> stub = worker::WorkerService::NewStub(
          remote::WorkerChannel(address, options.reconnect_backoff, options.credentials));
      {
        MutexLock lock(mu);
        Vacate(slot);
        state[slot].address = address;
        state[slot].joining = true;
        state[slot].stub = std::move(stub);
      }
      workers[slot].instance.clear();
      no_slot_logged.erase(address);
      health->Rename(slot, NameOf(slot, address));
      health->Log("sloserve: " + NameOf(slot, address) +
                  " joins the worker set: used once it answers a health check");
    }
  }

  // Slot w without its address (the next one is a new process: its numbering starts at
  // 1); the engine's view of what is resident there stays.
  void Vacate(WorkerId w) REQUIRES(mu) {
    if (state[w].stream != nullptr) state[w].stream->Cancel();  // no calls on it
    if (state[w].tcp != nullptr) state[w].tcp->conn->Close("its address left the worker set");
    WorkerState empty;
    empty.resident = std::move(state[w].resident);
    empty.hardware = state[w].hardware;
    state[w] = std::move(empty);
  }

  // Calls in flight on worker w.
  size_t CallsOf(WorkerId w) const REQUIRES(mu) {
    size_t n = 0;
    for (const auto& [id, call] : in_flight) n += call->worker == w ? 1 : 0;
    return n;
  }

  void StartHealthWhenReady() EXCLUDES(mu) {
    {
      MutexLock lock(mu);
      if (!connected || !attached || health_started) return;
      health_started = true;
    }
    health->Start();
  }

  // Worker w's calls in flight cancelled (WorkerHealth's CancelCalls).
  // A stream's cancel fails its Runs (OnStream kFinished).
  size_t CancelCalls(WorkerId w) EXCLUDES(mu) {
    MutexLock lock(mu);
    for (auto& [raw, stream] : streams) {
      if (raw->worker == w) raw->Cancel();
    }
    for (const auto& t : tcp_channels) {
      if (t->worker == w) t->conn->Close("the worker was marked down");
    }
    return remote::CancelCallsOf(in_flight, w);
  }

  // Cancels worker w's Run streams on which a Run has passed its deadline (on the health
  // thread, each round: a stream has no per-call deadline); its calls fail DEADLINE_EXCEEDED.
  void ExpireStreamCalls(WorkerId w) EXCLUDES(mu) {
    const auto now = std::chrono::steady_clock::now();
    MutexLock lock(mu);
    for (auto& [id, call] : in_flight) {
      if (call->worker != w || call->deadline > now || call->answered) continue;
      const std::string why = "action " + std::to_string(id) + " had no reply within its deadline";
      if (RunStream* s = call->stream; s != nullptr && s->deadline_passed.empty()) {
        s->deadline_passed = why;
        s->Cancel();
      } else if (TcpRunChannel* t = call->tcp; t != nullptr && t->deadline_passed.empty()) {
        t->deadline_passed = why;
        t->conn->Close(why);
      }
    }
  }

  // One round of Health calls to the workers `ws`, all at once on `health_cq` and given up
  // together after `timeout` (remote/call_round.h). One status per worker of `ws`: OK when
  // it answers with this suite's variants (AfterHealthReply).
  //
  // With `passive`, a worker heard on its Run stream within the health interval, from the
  // process its last check found and with room in its queue, is OK without a call (but for
  // every kFullCheckEvery-th round): under load that is most rounds, so the checks cost the
  // workers and this thread almost nothing (docs/remote-workers.md).
  std::vector<Status> CheckHealth(const std::vector<WorkerId>& ws, Duration timeout,
                                  bool passive = false) EXCLUDES(mu) {
    struct Call {
      size_t i = 0;  // in ws
      std::shared_ptr<Stub> stub;
      // What the engine believed resident before asking (ReconcileResidents).
      std::set<VariantId> resident_before;
      bool joining = false;
      ::grpc::ClientContext ctx;
      ::grpc::Status status;
      worker::HealthReply reply;
      std::unique_ptr<::grpc::ClientAsyncResponseReader<worker::HealthReply>> call;
    };
    std::vector<Status> out(ws.size());
    std::vector<std::unique_ptr<Call>> calls;
    remote::CallRound round(&health_cq);
    const TimePoint now = clock.Now();
    for (size_t i = 0; i < ws.size(); ++i) {
      const WorkerId w = ws[i];
      ExpireStreamCalls(w);
      if (passive && HeardRecently(w, now)) {
        ++workers[w].skipped;
        continue;  // out[i] stays OK
      }
      workers[w].skipped = 0;
      auto c = std::make_unique<Call>();
      c->i = i;
      {
        MutexLock lock(mu);
        c->resident_before = state[w].resident;
        c->stub = state[w].stub;
        c->joining = state[w].joining;
        if (c->stub == nullptr) {
          out[i] = UnavailableError("a free slot (no address)");
        } else if (state[w].draining) {
          out[i] = UnavailableError("left the worker set");
        }
      }
      if (!out[i].ok()) continue;
      c->call = c->stub->AsyncHealth(&c->ctx, worker::HealthRequest(), &health_cq);
      c->call->Finish(&c->reply, &c->status, round.Add(&c->ctx, &c->status));
      calls.push_back(std::move(c));
    }
    const std::vector<Status> answers = round.Await(timeout);
    for (size_t k = 0; k < calls.size(); ++k) {
      const Call& c = *calls[k];
      out[c.i] = answers[k].ok() ? AfterHealthReply(ws[c.i], c.reply, c.resident_before, c.joining)
                                 : answers[k];
    }
    return out;
  }

  // Whether worker w's Run stream answered within the health interval, from the process
  // its last check found, with room in its queue, and a Health call is not due anyway.
  bool HeardRecently(WorkerId w, TimePoint now) EXCLUDES(mu) {
    if (workers[w].instance.empty() || workers[w].skipped + 1 >= kFullCheckEvery) return false;
    MutexLock lock(mu);
    const WorkerState& s = state[w];
    return !s.joining && !s.draining && s.stub != nullptr && !s.heard_full &&
           s.heard_instance == workers[w].instance && now - s.heard <= options.health_interval;
  }

  // What a worker's answer to a Health call says: OK when it serves this suite's variants
  // and accepts actions. Loads what a joining or restarted worker lacks, or what it lost.
  Status AfterHealthReply(WorkerId w, const worker::HealthReply& reply,
                          const std::set<VariantId>& resident_before, bool joining) EXCLUDES(mu) {
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
    if (joining) {
      // A new address of an elastic set: it holds none of the slot's residents yet (loaded
      // as at start: the engine counts no cold start for them), used only after.
      RETURN_IF_ERROR(LoadJoined(w, reply));
      MutexLock lock(mu);
      state[w].joining = false;
    } else if (!workers[w].instance.empty() && reply.instance() != workers[w].instance) {
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
    if (options.tcp_runs) OpenTcpRuns(w, reply.run_port());
    return OkStatus();
  }

  // Opens worker w's TCP Run channel if it offers one and has none open (on the thread
  // that checks health); first lets go of the channels that have ended.
  void OpenTcpRuns(WorkerId w, uint32_t run_port) EXCLUDES(mu) {
    std::vector<std::unique_ptr<TcpRunChannel>> ended;  // joined outside the lock
    std::string address;
    {
      MutexLock lock(mu);
      std::erase_if(tcp_channels, [&ended](std::unique_ptr<TcpRunChannel>& t) {
        if (!t->end_handled || !t->conn->ended()) return false;
        ended.push_back(std::move(t));
        return true;
      });
      WorkerState& s = state[w];
      if (run_port == 0 && !s.tcp_logged) {
        s.tcp_logged = true;
        health->Log("sloserve: " + NameOf(w, s.address) +
                    " offers no TCP Run channel (start it with --run-port): its Runs go on "
                    "its gRPC Run stream");
      }
      s.run_port = run_port;
      if (run_port == 0 || s.tcp != nullptr || s.stub == nullptr || s.draining ||
          std::chrono::steady_clock::now() < s.tcp_retry_at)
        return;
      address = s.address;
    }
    const std::string host = remote::HostOf(address);
    StatusOr<int> fd =
        remote::ConnectTcp(host, static_cast<uint16_t>(run_port), options.health_timeout);
    if (!fd.ok()) {
      MutexLock lock(mu);
      state[w].tcp_retry_at = std::chrono::steady_clock::now() + kTcpRetry;
      if (!state[w].tcp_logged) {
        state[w].tcp_logged = true;
        health->Log("sloserve: " + NameOf(w, address) + ": " + fd.status().message() +
                    "; its Runs go on its gRPC Run stream until it connects");
      }
      return;
    }
    auto owned = std::make_unique<TcpRunChannel>();
    TcpRunChannel* t = owned.get();
    t->worker = w;
    t->conn = std::make_unique<remote::FramedConnection>(
        *fd, kMaxTcpFrameBytes, 4 * kMaxTcpFrameBytes,
        remote::FramedConnection::Handlers{
            [this, t](std::string_view frame) { OnTcpReply(t, frame); },
            [this, t](const Status& why) { OnTcpEnded(t, why); }, [this] { Delivered(); }});
    MutexLock lock(mu);
    if (state[w].address != address || state[w].tcp != nullptr) return;  // changed meanwhile
    state[w].tcp = t;
    state[w].tcp_logged = false;
    tcp_channels.push_back(std::move(owned));
    t->conn->Start();
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
    health->Log("sloserve: " + NameOf(w) + " lost resident variant(s): loaded " + names + " again");
    return OkStatus();
  }

  // The worker's resident variants that the process answering `reply` has not loaded,
  // and its hardware.
  std::set<VariantId> ResidentNotLoaded(WorkerId w, const worker::HealthReply& reply,
                                        HardwareId* hardware) EXCLUDES(mu) {
    std::set<VariantId> load;
    {
      MutexLock lock(mu);
      load = state[w].resident;
      *hardware = state[w].hardware;
    }
    for (uint32_t v : reply.loaded_variants()) load.erase(v);
    return load;
  }

  // Loads the slot's resident variants on the address that joined it (those it does not
  // hold yet), as at start.
  Status LoadJoined(WorkerId w, const worker::HealthReply& reply) EXCLUDES(mu) {
    HardwareId hardware = 0;
    const std::set<VariantId> load = ResidentNotLoaded(w, reply, &hardware);
    std::string names;
    RETURN_IF_ERROR(LoadNow(w, hardware, load, " (joining)", /*at_start=*/true, &names));
    health->Log("sloserve: " + NameOf(w) + " loaded the slot's " + std::to_string(load.size()) +
                " resident variant(s)" + (names.empty() ? "" : " (" + names + ")"));
    return OkStatus();
  }

  // Loads the worker's resident variants on its new process (one Load call each, with the
  // action timeout), those it has not loaded yet.
  Status LoadResidentAgain(WorkerId w, const worker::HealthReply& reply) EXCLUDES(mu) {
    HardwareId hardware = 0;
    const std::set<VariantId> load = ResidentNotLoaded(w, reply, &hardware);
    std::string names;
    RETURN_IF_ERROR(LoadNow(w, hardware, load, " again", /*at_start=*/false, &names));
    health->Log("sloserve: " + NameOf(w) + " restarted: loaded its " + std::to_string(load.size()) +
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
      std::shared_ptr<Stub> stub;
      {
        MutexLock lock(mu);
        stub = state[w].stub;
        if (stub == nullptr) return UnavailableError("a free slot (no address)");
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
      const ::grpc::Status s = stub->Load(&ctx, req, &ack);
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
      r.status = UnavailableError(NameOf(call->worker) + ": " + status.error_message());
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
      PostResult(std::move(r));
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

  // Writes a Run on worker w's stream (opening one if it has none open): after the
  // requests queued before it, one write at a time.
  void Queue(WorkerId w, RemoteCall* call) REQUIRES(mu) {
    if (TcpRunChannel* t = state[w].tcp; t != nullptr && t->ready && !t->end_handled) {
      call->tcp = t;
      worker::RunRequests message;
      *message.add_runs() = std::move(call->run);
      // A failed send closes the connection: its end fails this Run with the others on it.
      (void)t->conn->Send(message);
      return;
    }
    RunStream* s = state[w].stream;
    if (s == nullptr || !s->open()) {
      auto owned = std::make_unique<RunStream>();
      s = owned.get();
      s->stub = state[w].stub;
      s->owner = this;
      s->worker = w;
      // Corked: the call's metadata goes out with the first request (StartCall performs
      // nothing and its tag never comes back: the read is started after that write).
      s->ctx.set_initial_metadata_corked(true);
      s->shared = shared_cq != nullptr;
      s->rw = s->stub->PrepareAsyncRunStream(&s->ctx, CallQueue());
      s->rw->StartCall(nullptr);
      streams.emplace(s, std::move(owned));
      state[w].stream = s;
    }
    call->stream = s;
    ++s->calls;
    *s->queued.add_runs() = std::move(call->run);
    if (!s->writing) s->WriteQueued();
    // After the write (and the first write, which starts the call): the read's window
    // update follows the Run.
    s->started = true;
    s->StartRead();
  }

  // A Run stream's event (on whichever thread drains the reply queue).
  void OnStream(RunStream* s, StreamOp op, bool ok) EXCLUDES(mu) override {
    switch (op) {
      case StreamOp::kRead:
        if (ok) return OnReply(s);
        {
          MutexLock lock(mu);
          s->read_done = true;
          MaybeFinish(s);
        }
        break;
      case StreamOp::kWrote: {
        MutexLock lock(mu);
        s->sending.Clear();
        if (!ok) {  // broken: the read ends too; what was queued fails at Finish
          s->queued.Clear();
          s->Cancel();
        }
        if (s->queued.runs_size() > 0) {
          s->StartRead();  // pending already: Runs wait
          s->WriteQueued();
          return;
        }
        s->writing = false;
        MaybeFinish(s);
        break;
      }
      case StreamOp::kFinished:
        return OnStreamEnded(s);
    }
  }

  // A reply: the call it answers ends (its id is looked up on this stream only), and the
  // next read starts if a Run is still waiting.
  void OnReply(RunStream* s) EXCLUDES(mu) {
    std::vector<RemoteCall*> answered;
    {
      MutexLock lock(mu);
      for (worker::ActionReply& reply : *s->in.mutable_replies()) {
        auto it = in_flight.find(reply.action());
        // Not ours (a bug of the worker's, or answered twice): ignored.
        if (it == in_flight.end() || it->second->stream != s || it->second->answered) continue;
        RemoteCall* call = it->second.get();
        call->answered = true;
        call->reply = std::move(reply);
        --s->calls;
        answered.push_back(call);
      }
      Heard(s->worker, s->in);
      s->in.Clear();
      s->reading = false;
      if (s->calls > 0 || s->cancelled) s->StartRead();  // else with the next Run's write
    }
    // Only this thread (the queue's drainer) retires a stream's calls: alive here.
    for (RemoteCall* call : answered) FinishReplied(call);
  }

  // What a message of replies says of its worker (HeardRecently).
  void Heard(WorkerId w, const worker::ActionReplies& message) REQUIRES(mu) {
    WorkerState& s = state[w];
    s.heard = clock.Now();
    s.heard_instance = message.instance();
    s.heard_full = message.max_pending_actions() > 0 &&
                   message.pending_actions() >= message.max_pending_actions();
  }

  // A Run answered by its reply: finished, or failed as the unary call the worker refused.
  void FinishReplied(RemoteCall* call) EXCLUDES(mu) {
    const int refusal = call->reply.refusal();
    Finish(call, refusal == 0 ? ::grpc::Status::OK
                              : ::grpc::Status(static_cast<::grpc::StatusCode>(refusal),
                                               call->reply.message()));
  }

  // Whether replies are posted quietly and stepped on the thread that read them: while
  // serve's gRPC queue thread drains the replies too (DrainOn), the driver's thread sleeps
  // on its own and the TCP channel's thread steps the engine itself when it is idle, as
  // that queue thread does; else the results are posted (waking the driver's thread).
  bool TcpQuiet() EXCLUDES(mu) {
    MutexLock lock(mu);
    return shared_cq != nullptr;
  }

  // A frame of replies on a TCP Run channel (its connection's thread): as OnReply. Results
  // posted quietly are stepped for once per read, after its last frame (Delivered).
  void OnTcpReply(TcpRunChannel* t, std::string_view frame) EXCLUDES(mu) {
    worker::ActionReplies replies;
    if (!replies.ParseFromArray(frame.data(), static_cast<int>(frame.size()))) {
      t->conn->Close("a frame that is not an ActionReplies message");
      return;
    }
    std::vector<RemoteCall*> answered;
    {
      MutexLock lock(mu);
      for (worker::ActionReply& reply : *replies.mutable_replies()) {
        auto it = in_flight.find(reply.action());
        if (it == in_flight.end() || it->second->tcp != t || it->second->answered) continue;
        RemoteCall* call = it->second.get();
        call->answered = true;
        call->reply = std::move(reply);
        answered.push_back(call);
      }
      t->ready = true;  // the worker's greeting, or any frame after it
      Heard(t->worker, replies);
    }
    // Only this thread retires the channel's calls (until its end): alive here.
    remote_internal::t_deliver_quietly = TcpQuiet();
    for (RemoteCall* call : answered) FinishReplied(call);
    remote_internal::t_deliver_quietly = false;
  }

  // A TCP Run channel ended (its connection's thread, once): every Run still on it fails
  // with why, as when a Run stream ends; the next Run goes on the Run stream until the
  // next health check opens a new channel.
  void OnTcpEnded(TcpRunChannel* t, const Status& why) EXCLUDES(mu) {
    std::vector<RemoteCall*> failed;
    ::grpc::Status status;
    {
      MutexLock lock(mu);
      t->end_handled = true;
      WorkerState& s = state[t->worker];
      if (s.tcp == t) s.tcp = nullptr;
      s.heard = TimePoint{};
      if (!t->ready) {  // closed before the worker greeted it: no Run went on it
        s.tcp_retry_at = std::chrono::steady_clock::now() + kTcpRetry;
        if (!s.tcp_logged) {
          s.tcp_logged = true;
          health->Log("sloserve: " + NameOf(t->worker, s.address) +
                      ": its TCP Run channel closed before the worker greeted it (" +
                      why.message() +
                      "; are its channels all taken?): its Runs go on its gRPC Run stream, "
                      "tried again in 5 s");
        }
      }
      status =
          t->deadline_passed.empty()
              ? ::grpc::Status(::grpc::StatusCode::UNAVAILABLE, "TCP Run channel: " + why.message())
              : ::grpc::Status(::grpc::StatusCode::DEADLINE_EXCEEDED, t->deadline_passed);
      for (auto& [id, call] : in_flight) {
        if (call->tcp == t && !call->answered) failed.push_back(call.get());
      }
    }
    CallOwner::Deliver(this, TcpQuiet(), [&] {
      for (RemoteCall* call : failed) Finish(call, status);
    });
    MutexLock lock(mu);
    cv.NotifyAll();  // the destructor waits for every channel's end
  }

  // Reads ended and no write in progress: the stream's one Finish.
  void MaybeFinish(RunStream* s) REQUIRES(mu) {
    if (!s->read_done || s->writing || s->finishing) return;
    s->finishing = true;
    void* tag = remote::ReplyTag::Of(&s->finished);
    TsanRelease(tag);
    s->rw->Finish(&s->status, tag);
  }

  // The stream ended: every Run still on it fails once with why (the worker is lost, or a
  // Run's deadline passed: both mark it down), and the next Run opens a new stream.
  void OnStreamEnded(RunStream* s) EXCLUDES(mu) {
    std::vector<RemoteCall*> failed;
    ::grpc::Status why;
    {
      MutexLock lock(mu);
      if (state[s->worker].stream == s) state[s->worker].stream = nullptr;
      state[s->worker].heard = TimePoint{};  // an ended stream vouches for nothing: checked
      if (!s->deadline_passed.empty()) {
        why = {::grpc::StatusCode::DEADLINE_EXCEEDED, s->deadline_passed};
      } else if (s->status.ok()) {
        why = {::grpc::StatusCode::UNAVAILABLE, "the worker closed the Run stream"};
      } else {
        why = s->status;
      }
      for (auto& [id, call] : in_flight) {
        if (call->stream == s && !call->answered) failed.push_back(call.get());
      }
    }
    // Only this thread (the queue's drainer) retires a stream's calls: alive here.
    for (RemoteCall* call : failed) Finish(call, why);
    // gRPC holds no tag of it any more (Finish came after its read and write ended).
    std::unique_ptr<RunStream> gone;
    MutexLock lock(mu);
    if (auto it = streams.find(s); it != streams.end()) {
      gone = std::move(it->second);
      streams.erase(it);
    }
    cv.NotifyAll();
    // `gone` is destroyed after the unlock (declared before the lock).
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
  void FailNow(const WorkerAction& action, WorkerId w) EXCLUDES(mu) {
    ActionResult r;
    r.id = IdOf(action);
    r.worker = w;
    r.begin = r.end = clock.Now();
    r.status = UnavailableError(NameOf(w) + " is down");
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
  Impl& m = *impl_;
  const bool elastic = m.options.elastic();
  if (elastic) {
    m.source = std::make_unique<remote::WorkerSetSource>(
        m.options.workers_file, m.options.dns_target, m.options.dns_interval);
  }
  // An elastic set: free slots until Connect reads the set.
  const size_t count = elastic ? m.options.slots : m.options.addresses.size();
  m.workers.resize(count);
  std::vector<std::string> names;
  {
    MutexLock lock(m.mu);
    m.state.resize(count);
    for (WorkerId w = 0; !elastic && w < count; ++w) {
      const std::string& address = m.options.addresses[w];
      m.state[w].address = address;
      m.state[w].stub = worker::WorkerService::NewStub(
          remote::WorkerChannel(address, m.options.reconnect_backoff, m.options.credentials));
    }
    for (WorkerId w = 0; w < count; ++w) names.push_back(Impl::NameOf(w, m.state[w].address));
  }
  m.health = std::make_unique<remote::WorkerHealth>(
      std::move(names),
      remote::WorkerHealthOptions{
          m.options.health_interval, m.options.health_timeout, m.options.failures_to_down,
          m.options.log, /*start_down=*/elastic,
          elastic ? std::function<void()>([&m] { (void)m.Refresh(); }) : nullptr},
      [&m, count](Duration timeout) {
        std::vector<WorkerId> all(count);
        for (WorkerId w = 0; w < count; ++w) all[w] = w;
        return m.CheckHealth(all, timeout, /*passive=*/true);
      },
      [&m](WorkerId w) { return m.CancelCalls(w); });
}

RemoteExecutor::~RemoteExecutor() {
  Impl& m = *impl_;
  m.health->Stop();
  remote::CallRound::ShutDown(&m.health_cq);
  // The driver that drained the replies is done (its thread no longer waits): the calls
  // still in flight end on the queue's own thread.
  m.replies->StartThread();
  std::vector<std::unique_ptr<TcpRunChannel>> tcp;  // joined after the unlock
  MutexLock lock(m.mu);
  for (auto& [id, call] : m.in_flight) call->ctx.TryCancel();
  for (auto& [raw, stream] : m.streams) raw->Cancel();
  for (const auto& t : m.tcp_channels) t->conn->Close("the controller is stopping");
  auto tcp_open = [&m]() REQUIRES(m.mu) {
    return std::any_of(m.tcp_channels.begin(), m.tcp_channels.end(),
                       [](const auto& t) { return !t->end_handled; });
  };
  while (!m.in_flight.empty() || !m.streams.empty() || tcp_open()) m.cv.Wait(m.mu);
  tcp.swap(m.tcp_channels);
}

Status RemoteExecutor::Connect() {
  Impl& m = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + m.options.connect_timeout;
  if (m.options.elastic()) {
    // A workers file must be there and valid at start (a typo should not serve with no
    // workers); a DNS name may have no address yet (its pods are starting). Nobody is
    // waited for: each address joins at its first good check.
    if (!m.options.workers_file.empty()) {
      RETURN_IF_ERROR(m.source->Refresh(std::chrono::steady_clock::now()));
    }
    (void)m.Refresh();
  }
  // Every worker checked at once, again every 100 ms for those not up yet.
  std::vector<WorkerId> waiting;
  for (WorkerId w = 0; !m.options.elastic() && w < m.workers.size(); ++w) waiting.push_back(w);
  while (!waiting.empty()) {
    const std::vector<Status> round = m.CheckHealth(waiting, Seconds(1));
    std::vector<WorkerId> still;
    for (size_t i = 0; i < waiting.size(); ++i) {
      const Status& s = round[i];
      if (s.ok()) continue;
      if (s.code() == StatusCode::kFailedPrecondition ||
          std::chrono::steady_clock::now() >= deadline) {
        return s.WithPrefix("remote worker " + m.AddressOf(waiting[i]));
      }
      still.push_back(waiting[i]);
    }
    waiting = std::move(still);
    if (!waiting.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
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
  if (m.options.elastic()) {
    // Counted resident in the slot: each address that joins it loads them (LoadJoined).
    MutexLock lock(m.mu);
    m.state[worker].resident.insert(variants.begin(), variants.end());
    m.state[worker].hardware = hardware;
    return OkStatus();
  }
  std::string names;
  RETURN_IF_ERROR(m.LoadNow(worker, hardware, {variants.begin(), variants.end()},
                            " (resident at start)", /*at_start=*/true, &names)
                      .WithPrefix(m.NameOf(worker)));
  m.health->Log("sloserve: " + m.NameOf(worker) +
                " loaded the variants resident at start: " + (names.empty() ? "none" : names));
  return OkStatus();
}

ExecutorWait* RemoteExecutor::TakeWait() {
  {
    MutexLock lock(impl_->mu);
    if (impl_->shared_cq != nullptr) return nullptr;  // DrainOn: the driver sleeps on its own
  }
  return impl_->replies->TakeForDriver();
}

void RemoteExecutor::DrainOn(::grpc::CompletionQueue* cq) {
  MutexLock lock(impl_->mu);
  impl_->shared_cq = cq;
}

void RemoteExecutor::LeaveQueue() {
  Impl& m = *impl_;
  MutexLock lock(m.mu);
  if (m.shared_cq == nullptr) return;
  m.shared_cq = nullptr;  // from now on on the executor's own queue (its thread drains it)
  for (auto& [id, call] : m.in_flight) {
    if (call->shared) call->ctx.TryCancel();  // a Run's ends with its stream's
  }
  for (auto& [raw, stream] : m.streams) {
    if (raw->shared) raw->Cancel();
  }
  // Their ends are delivered by the queue's thread, still running.
  while (m.OnSharedQueue() > 0) m.cv.Wait(m.mu);
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
  const auto timeout = std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::max(expected, Duration(0)) * 2 + m.options.action_timeout);
  if (call->is_run) {
    call->deadline = std::chrono::steady_clock::now() + timeout;
  } else {
    call->ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  }
  bool vacated = false;
  bool sent = false;
  ::grpc::CompletionQueue* cq = nullptr;  // a Load's or Unload's
  {
    MutexLock lock(m.mu);
    Impl::WorkerState& wk = m.state[w];
    if (wk.stub == nullptr || wk.joining) {
      // An elastic slot freed, or given a new address not loaded yet, since the check
      // above (its address left the set): failed below as for a worker down.
      vacated = true;
    } else if (m.in_flight.try_emplace(call->id, std::move(owned)).second) {
      // The engine's ids are unique: a second action under one in flight is a bug there
      // (failed below; `owned` stays with this call then).
      call->stub = wk.stub;
      call->owner = &m;
      if (!call->is_run) call->lifecycle.set_sequence(wk.next_sequence++);
      if (!call->is_run) {
        cq = m.CallQueue();
        call->shared = m.shared_cq != nullptr;
      }
      if (call->is_run) {
        m.Queue(w, call);  // on the worker's Run stream
        sent = true;
      }
      if (const auto* run = std::get_if<RunBatch>(&action)) {
        wk.resident.insert(run->variant);  // the engine runs only what it believes loaded
        wk.hardware = run->hardware;
      } else if (const auto* unload = std::get_if<UnloadVariant>(&action)) {
        wk.resident.erase(unload->variant);
      }
    }
  }
  if (vacated) {
    m.FailNow(action, w);
    return Duration(0);
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
  if (sent) return Duration(0);
  Impl::Stub* stub = call->stub.get();
  if (std::holds_alternative<LoadVariant>(action)) {
    call->rpc = stub->PrepareAsyncLoad(&call->ctx, call->lifecycle, cq);
  } else {
    call->rpc = stub->PrepareAsyncUnload(&call->ctx, call->lifecycle, cq);
  }
  call->rpc->StartCall();
  void* tag = remote::ReplyTag::Of(call);
  TsanRelease(tag);  // whoever drains the reply queue reads the call and retires it (Finish)
  call->rpc->Finish(&call->reply, &call->status, tag);
  return Duration(0);
}

int RemoteExecutor::down_workers() const {
  return impl_->health->down_workers();
}

int RemoteExecutor::tcp_channels_ready() const {
  MutexLock lock(impl_->mu);
  int n = 0;
  for (const Impl::WorkerState& w : impl_->state) {
    n += w.tcp != nullptr && w.tcp->ready && !w.tcp->end_handled ? 1 : 0;
  }
  return n;
}

int RemoteExecutor::vacant_workers() const {
  if (!impl_->options.elastic()) return 0;
  MutexLock lock(impl_->mu);
  int n = 0;
  for (const Impl::WorkerState& w : impl_->state) n += w.address.empty() ? 1 : 0;
  return n;
}

}  // namespace sloserve

#include "sloserve/remote/kserve_executor.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <unordered_map>

#include "sloserve/core/mutex.h"
#include "sloserve/core/tsan.h"
#include "sloserve/engine/clock.h"
#include "sloserve/grpc/tensor_contents.h"
#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "sloserve/remote/call_round.h"
#include "sloserve/remote/reply_queue.h"
#include "sloserve/remote/worker_channel.h"
#include "sloserve/remote/worker_health.h"

namespace sloserve {

// Named, not anonymous: KServeExecutor::Impl (external linkage) holds it, which GCC's
// -Wsubobject-linkage refuses in a unity build.
namespace kserve_internal {

struct KServeCall;

// What a finished call is handed to (the executor's Impl).
class CallOwner {
 public:
  virtual void Finish(KServeCall* call) = 0;

 protected:
  ~CallOwner() = default;
};

// One action's call: owned by the executor's in_flight map from Send until whoever drains
// the reply queue (the driver's thread, else the queue's own) has posted its result.
struct KServeCall final : remote::ReplyTag {
  ::grpc::ClientContext ctx;
  // In ctx's call arena: declared after ctx, so destroyed before it. One of the two.
  std::unique_ptr<::grpc::ClientAsyncResponseReader<inference::ModelInferResponse>> infer_rpc;
  std::unique_ptr<::grpc::ClientAsyncResponseReader<inference::ModelReadyResponse>> ready_rpc;
  inference::ModelInferRequest infer;
  inference::ModelInferResponse infer_reply;
  inference::ModelReadyRequest ready;
  inference::ModelReadyResponse ready_reply;
  ::grpc::Status status;
  CallOwner* owner = nullptr;
  ActionId id = 0;
  WorkerId worker = 0;
  bool is_run = false;
  std::vector<int32_t> rows;  // each query's rows, in launch order
  TimePoint sent{};

  void Done(bool /*ok: always true for a unary Finish*/) override { owner->Finish(this); }
};

}  // namespace kserve_internal
using kserve_internal::KServeCall;

struct KServeExecutor::Impl final : kserve_internal::CallOwner {
  const ProfileSuite* suite;
  PayloadStore* payloads;
  KServeExecutorOptions options;
  SteadyClock clock;
  std::vector<std::unique_ptr<inference::GRPCInferenceService::Stub>> stubs;

  Mutex mu;
  CondVar cv;  // notified when a call leaves in_flight
  // The calls sent and not yet retired by Finish, owned here; the lock keeps each alive
  // while CancelCalls or the destructor cancels it.
  std::unordered_map<ActionId, std::unique_ptr<KServeCall>> in_flight GUARDED_BY(mu);
  std::unique_ptr<remote::WorkerHealth> health;
  // The health checks' calls (the health thread's), shut down after it stops.
  ::grpc::CompletionQueue health_cq;
  ResultSink* sink = nullptr;  // set by Attach, before any Send
  // Last member: destroyed first, delivering what is left while the rest is alive.
  std::unique_ptr<remote::ReplyQueue> replies = std::make_unique<remote::ReplyQueue>();

  // One round of health checks (WorkerHealth's CheckRound): every server asked
  // ServerReady at once on `health_cq`, given up together after `timeout`; OK = it
  // answers ready = true.
  std::vector<Status> CheckReady(Duration timeout) {
    struct Call {
      ::grpc::ClientContext ctx;
      ::grpc::Status status;
      inference::ServerReadyResponse reply;
      std::unique_ptr<::grpc::ClientAsyncResponseReader<inference::ServerReadyResponse>> call;
    };
    std::vector<Call> calls(stubs.size());
    remote::CallRound round(&health_cq);
    for (WorkerId w = 0; w < stubs.size(); ++w) {
      Call& c = calls[w];
      c.call = stubs[w]->AsyncServerReady(&c.ctx, inference::ServerReadyRequest(), &health_cq);
      c.call->Finish(&c.reply, &c.status, round.Add(&c.ctx, &c.status));
    }
    std::vector<Status> out = round.Await(timeout);
    for (WorkerId w = 0; w < stubs.size(); ++w) {
      if (out[w].ok() && !calls[w].reply.ready()) {
        out[w] = UnavailableError("ServerReady answered ready = false");
      }
    }
    return out;
  }

  // Worker w's calls in flight cancelled (WorkerHealth's CancelCalls).
  size_t CancelCalls(WorkerId w) EXCLUDES(mu) {
    MutexLock lock(mu);
    return remote::CancelCallsOf(in_flight, w);
  }

  std::string ModelOf(VariantId v) const {
    return options.model.empty() ? suite->variants()[v].name : options.model;
  }

  // The batch's inputs stacked along the batch dimension into one raw input.
  Status BuildInfer(const RunBatch& run, KServeCall* call) {
    inference::ModelInferRequest& req = call->infer;
    req.set_model_name(ModelOf(run.variant));
    std::string* raw = req.add_raw_input_contents();
    inference::ModelInferRequest::InferInputTensor* input = nullptr;
    int64_t rows = 0;
    for (const Query& q : run.queries) {
      const auto set = q.payload != 0 ? payloads->Get(q.payload) : nullptr;
      if (!set || set->size() != 1) {
        return InvalidArgumentError("query " + std::to_string(q.id) +
                                    " has no single input tensor to send to the KServe server");
      }
      const Tensor& t = set->front();
      if (t.shape.empty() || t.shape[0] != q.size) {
        return InvalidArgumentError("query " + std::to_string(q.id) + "'s input '" + t.name +
                                    "' does not have its " + std::to_string(q.size) +
                                    " rows in dimension 0");
      }
      if (input == nullptr) {
        input = req.add_inputs();
        input->set_name(t.name);
        input->set_datatype(t.datatype);
        for (int64_t d : t.shape) input->add_shape(d);
      } else if (t.name != input->name() || t.datatype != input->datatype() ||
                 !std::equal(t.shape.begin() + 1, t.shape.end(), input->shape().begin() + 1,
                             input->shape().end())) {
        return InvalidArgumentError("the batch's inputs differ in name, datatype or shape");
      }
      raw->append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
      rows += q.size;
      call->rows.push_back(q.size);
    }
    if (input == nullptr) return InvalidArgumentError("empty batch");
    input->set_shape(0, rows);
    return OkStatus();
  }

  // The answer's outputs split back by rows: one output set per query.
  Status SplitOutputs(const KServeCall& call, ActionResult* r) {
    const inference::ModelInferResponse& resp = call.infer_reply;
    int64_t total = 0;
    for (int32_t n : call.rows) total += n;
    std::vector<TensorSet> per_query(call.rows.size());
    for (int i = 0; i < resp.outputs_size(); ++i) {
      const auto& out = resp.outputs(i);
      const std::vector<int64_t> shape(out.shape().begin(), out.shape().end());
      const int64_t elements = grpc_protocol::ElementCount(shape);
      if (shape.empty() || shape[0] != total || elements < 0) {
        return InternalError("the KServe server's output '" + out.name() + "' does not have the " +
                             std::to_string(total) + " rows of the batch in dimension 0");
      }
      if (DatatypeSize(out.datatype()) == 0) {
        return InternalError("output '" + out.name() + "' of datatype '" + out.datatype() +
                             "' cannot be split by rows (variable-size elements)");
      }
      StatusOr<std::vector<uint8_t>> bytes =
          i < resp.raw_output_contents_size()
              ? grpc_protocol::BytesFromRaw(resp.raw_output_contents(i), out.datatype(), elements,
                                            out.name())
              : grpc_protocol::BytesFromContents(out.contents(), out.datatype(), elements,
                                                 out.name());
      if (!bytes.ok()) return InternalError("the KServe server's " + bytes.status().message());
      const size_t row_bytes = total > 0 ? bytes->size() / static_cast<size_t>(total) : 0;
      size_t at = 0;
      for (size_t q = 0; q < call.rows.size(); ++q) {
        Tensor t;
        t.name = out.name();
        t.datatype = out.datatype();
        t.shape = shape;
        t.shape[0] = call.rows[q];
        const size_t n = row_bytes * static_cast<size_t>(call.rows[q]);
        t.data.assign(bytes->begin() + static_cast<std::ptrdiff_t>(at),
                      bytes->begin() + static_cast<std::ptrdiff_t>(at + n));
        at += n;
        per_query[q].push_back(std::move(t));
      }
    }
    for (TensorSet& set : per_query) {
      auto handle = payloads->Put(std::move(set));
      if (!handle.ok()) {
        for (PayloadHandle h : r->outputs) payloads->Release(h);
        r->outputs.clear();
        return handle.status();
      }
      r->outputs.push_back(*handle);
    }
    return OkStatus();
  }

  // Every call's end, on the thread draining the reply queue: the action's result, posted
  // once.
  void Finish(KServeCall* call) override EXCLUDES(mu) {
    const ::grpc::Status& status = call->status;
    ActionResult r;
    r.id = call->id;
    r.worker = call->worker;
    r.begin = call->sent;
    r.end = clock.Now();
    const std::string where = "KServe server " + options.addresses[call->worker];
    const bool lost = !status.ok() && remote::IsWorkerLost(status.error_code());
    if (!status.ok()) {
      r.status = UnavailableError(where + ": " + status.error_message());
    } else if (call->is_run) {
      r.status = SplitOutputs(*call, &r);
    } else if (!call->ready_reply.ready()) {
      r.status =
          FailedPreconditionError(where + ": model '" + call->ready.name() + "' is not ready");
    }
    if (lost) {
      // The engine stops giving the server queries before it re-queues this batch's.
      health->MarkDown(call->worker, status.error_message());
      health->PostLost(call->worker, std::move(r));
    } else {
      sink->Post(std::move(r));
    }
    // Retired last, under the lock the destructor waits on: once it sees no call in
    // flight, no reply touches the executor any more. Destroyed outside the lock.
    std::unique_ptr<KServeCall> retired;
    {
      MutexLock lock(mu);
      if (auto it = in_flight.find(call->id); it != in_flight.end()) {
        retired = std::move(it->second);
        in_flight.erase(it);
      }
      cv.NotifyAll();
    }
  }
};

KServeExecutor::KServeExecutor(const ProfileSuite* suite, PayloadStore* payloads,
                               KServeExecutorOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->suite = suite;
  impl_->payloads = payloads;
  impl_->options = std::move(options);
  for (const std::string& address : impl_->options.addresses) {
    impl_->stubs.push_back(inference::GRPCInferenceService::NewStub(remote::WorkerChannel(
        address, impl_->options.reconnect_backoff, impl_->options.credentials)));
  }
  Impl& m = *impl_;
  std::vector<std::string> names;
  for (WorkerId w = 0; w < m.options.addresses.size(); ++w) {
    names.push_back("KServe server w" + std::to_string(w) + " (" + m.options.addresses[w] + ")");
  }
  m.health = std::make_unique<remote::WorkerHealth>(
      std::move(names),
      remote::WorkerHealthOptions{m.options.health_interval, m.options.health_timeout,
                                  m.options.failures_to_down, m.options.log},
      [&m](Duration timeout) { return m.CheckReady(timeout); },
      [&m](WorkerId w) { return m.CancelCalls(w); });
}

ExecutorWait* KServeExecutor::TakeWait() {
  return impl_->replies->TakeForDriver();
}

void KServeExecutor::Attach(ResultSink* sink) {
  WorkerExecutor::Attach(sink);
  impl_->sink = sink;
  impl_->replies->StartThreadUnlessTaken();
  impl_->health->Attach(sink);
  impl_->health->Start();
}

int KServeExecutor::down_workers() const {
  return impl_->health->down_workers();
}

KServeExecutor::~KServeExecutor() {
  Impl& m = *impl_;
  m.health->Stop();
  remote::CallRound::ShutDown(&m.health_cq);
  // The driver that drained the replies is done (its thread no longer waits): the calls
  // still in flight end on the queue's own thread.
  m.replies->StartThread();
  MutexLock lock(m.mu);
  for (auto& [id, call] : m.in_flight) call->ctx.TryCancel();
  while (!m.in_flight.empty()) m.cv.Wait(m.mu);
}

Duration KServeExecutor::Send(const WorkerAction& action) {
  Impl& m = *impl_;
  const WorkerId w = std::visit([](const auto& a) { return a.worker; }, action);
  ActionResult now_result;
  now_result.id = IdOf(action);
  now_result.worker = w;
  now_result.begin = now_result.end = m.clock.Now();
  if (w >= m.stubs.size()) {
    now_result.status =
        InvalidArgumentError("no KServe server for worker w" + std::to_string(w) + " (" +
                             std::to_string(m.stubs.size()) + " configured)");
    sink_->Post(std::move(now_result));
    return Duration(0);
  }
  if (std::holds_alternative<UnloadVariant>(action)) {
    sink_->Post(std::move(now_result));  // the server manages its own models
    return Duration(0);
  }
  if (!m.health->Up(w)) {
    now_result.status = UnavailableError("KServe server w" + std::to_string(w) + " (" +
                                         m.options.addresses[w] + ") is down");
    m.health->PostLost(w, std::move(now_result));
    return Duration(0);
  }
  auto owned = std::make_unique<KServeCall>();
  KServeCall* call = owned.get();
  call->owner = &m;
  call->id = IdOf(action);
  call->worker = w;
  call->sent = now_result.begin;
  Duration expected{};
  if (const auto* run = std::get_if<RunBatch>(&action)) {
    call->is_run = true;
    expected = run->expected;
    if (Status s = m.BuildInfer(*run, call); !s.ok()) {
      now_result.status = s;
      sink_->Post(std::move(now_result));
      return Duration(0);
    }
  } else {
    const auto& load = std::get<LoadVariant>(action);
    expected = load.expected;
    call->ready.set_name(m.ModelOf(load.variant));
  }
  call->ctx.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             std::max(expected, Duration(0)) * 2 + m.options.call_timeout));
  bool sent = false;
  {
    MutexLock lock(m.mu);
    sent = m.in_flight.try_emplace(call->id, std::move(owned)).second;
  }
  if (!sent) {  // the engine's ids are unique: one already in flight is a bug there
    now_result.status =
        InternalError("action " + std::to_string(call->id) + " is already in flight");
    sink_->Post(std::move(now_result));
    return Duration(0);
  }
  ::grpc::CompletionQueue* cq = m.replies->cq();
  void* tag = remote::ReplyTag::Of(call);
  if (call->is_run) {
    call->infer_rpc = m.stubs[w]->PrepareAsyncModelInfer(&call->ctx, call->infer, cq);
    call->infer_rpc->StartCall();
    TsanRelease(tag);  // whoever drains the reply queue reads and deletes the call
    call->infer_rpc->Finish(&call->infer_reply, &call->status, tag);
  } else {
    call->ready_rpc = m.stubs[w]->PrepareAsyncModelReady(&call->ctx, call->ready, cq);
    call->ready_rpc->StartCall();
    TsanRelease(tag);
    call->ready_rpc->Finish(&call->ready_reply, &call->status, tag);
  }
  return Duration(0);
}

}  // namespace sloserve

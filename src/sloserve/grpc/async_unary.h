#pragma once
// A unary RPC on gRPC's asynchronous (CompletionQueue) server API, shared by the
// inference server and the remote worker. Each UnaryCall is one call's state: it asks the
// service for the next call of its method, and when one arrives it starts the next
// request (so a call is always waiting), hands itself to the handler, and the handler
// answers with Reply() exactly once, at once or later from any thread (the backend's
// `done`). The CQ thread deletes the call when gRPC reports the answer sent.
//
// Shutdown order (AsyncServerThreads::Stop): Server::Shutdown, wait until every handler
// has replied, then shut the queues down and drain them.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/core/tsan.h"
#include "sloserve/grpc/protobuf_log.h"

namespace sloserve::grpc_protocol {

// What the calls of one server share: handlers not yet replied, and whether the queues
// are being shut down (a call must not ask for its successor on a shut-down queue).
struct AsyncServerState {
  std::atomic<int64_t> pending{0};
  Mutex mu;
  bool stopping GUARDED_BY(mu) = false;
};

class CallTag {
 public:
  virtual ~CallTag() = default;
  virtual void Proceed(bool ok) = 0;
};

template <class Service, class Request, class Response>
class UnaryCall : public CallTag {
 public:
  using RequestMethod = void (Service::*)(::grpc::ServerContext*, Request*,
                                          ::grpc::ServerAsyncResponseWriter<Response>*,
                                          ::grpc::CompletionQueue*, ::grpc::ServerCompletionQueue*,
                                          void*);
  using Handler = std::function<void(UnaryCall*)>;

  // Starts waiting for one call of `method` (unless the server is stopping).
  static void Listen(Service* service, ::grpc::ServerCompletionQueue* cq, RequestMethod method,
                     const Handler* handler, AsyncServerState* state) EXCLUDES(state->mu) {
    MutexLock lock(state->mu);
    if (state->stopping) return;
    auto* call = new UnaryCall(service, cq, method, handler, state);
    TsanRelease(call);  // the CQ thread that takes the tag reads the call (core/tsan.h)
    (service->*method)(&call->ctx, &call->request, &call->writer, cq, cq, call);
  }

  void Proceed(bool ok) override {
    if (state_ == State::kWaiting) {
      if (!ok) {  // the server is shutting down: no call came
        delete this;
        return;
      }
      Listen(service_, cq_, method_, handler_, server_);
      state_ = State::kHandling;
      server_->pending.fetch_add(1);
      (*handler_)(this);
      return;
    }
    delete this;  // the answer went out (or the call was cancelled)
  }

  // Answers the call; `response` is sent only with an OK status.
  void Reply(const ::grpc::Status& status) {
    state_ = State::kFinishing;
    AsyncServerState* server = server_;
    TsanRelease(this);  // the CQ thread that takes the tag reads state_ and deletes us
    if (status.ok()) {
      writer.Finish(response, status, this);
    } else if (status.error_message().size() > kMaxStatusMessage) {
      writer.FinishWithError(Shortened(status), this);
    } else {
      writer.FinishWithError(status, this);
    }
    server->pending.fetch_sub(1);  // after this the call may already be deleted
  }

  // The message travels as `grpc-message` metadata: past the client's metadata limit
  // (8 KiB by default) it would see RESOURCE_EXHAUSTED instead of this status. Names a
  // client sent are echoed short (EchoName); this bounds whatever else a message holds.
  static constexpr size_t kMaxStatusMessage = 1024;
  static ::grpc::Status Shortened(const ::grpc::Status& status) {
    const std::string& message = status.error_message();
    size_t cut = kMaxStatusMessage;  // not inside a UTF-8 character (clients decode it)
    while (cut > kMaxStatusMessage - 3 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80)
      --cut;
    return ::grpc::Status(status.error_code(), message.substr(0, cut) + "\xE2\x80\xA6",
                          status.error_details());
  }

  ::grpc::ServerContext ctx;
  Request request;
  Response response;
  ::grpc::ServerAsyncResponseWriter<Response> writer{&ctx};

 private:
  enum class State { kWaiting, kHandling, kFinishing };
  UnaryCall(Service* service, ::grpc::ServerCompletionQueue* cq, RequestMethod method,
            const Handler* handler, AsyncServerState* server)
      : service_(service), cq_(cq), method_(method), handler_(handler), server_(server) {}

  Service* service_;
  ::grpc::ServerCompletionQueue* cq_;
  RequestMethod method_;
  const Handler* handler_;
  AsyncServerState* server_;
  State state_ = State::kWaiting;
};

// Builds and starts a server for `service` on `address` with `threads` completion queues
// (into `cqs`); null, with `cqs` empty, when it cannot bind. `*port` is the bound port.
// `credentials`: TLS (SslServerCredentials), or null for plain TCP.
inline std::unique_ptr<::grpc::Server> StartAsyncServer(
    const std::string& address, size_t max_message_bytes, ::grpc::Service* service, int threads,
    std::vector<std::unique_ptr<::grpc::ServerCompletionQueue>>* cqs, int* port,
    std::shared_ptr<::grpc::ServerCredentials> credentials = nullptr) {
  RouteProtobufLog();  // a client's invalid UTF-8 strings must not flood stderr
  ::grpc::ServerBuilder builder;
  *port = 0;
  builder.AddListeningPort(address, credentials ? credentials : ::grpc::InsecureServerCredentials(),
                           port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(max_message_bytes));
  builder.RegisterService(service);
  for (int i = 0; i < threads; ++i) cqs->push_back(builder.AddCompletionQueue());
  std::unique_ptr<::grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || *port == 0) {
    server.reset();
    cqs->clear();
  }
  return server;
}

// One thread per completion queue, each running the queue's tags.
class AsyncServerThreads {
 public:
  // `cqs` must outlive Join().
  void Run(const std::vector<std::unique_ptr<::grpc::ServerCompletionQueue>>& cqs) {
    for (const auto& cq : cqs) {
      ::grpc::ServerCompletionQueue* q = cq.get();
      threads_.emplace_back([q] {
        void* tag = nullptr;
        bool ok = false;
        while (q->Next(&tag, &ok)) {
          TsanAcquire(tag);  // pairs with the TsanRelease before the tag went to gRPC
          static_cast<CallTag*>(tag)->Proceed(ok);
        }
      });
    }
  }
  // Server::Shutdown first; then waits for the pending handlers to reply (they reply
  // once their backend answers), shuts the queues down and joins the threads, which
  // delete the calls still queued.
  void Stop(::grpc::Server* server, AsyncServerState* state,
            const std::vector<std::unique_ptr<::grpc::ServerCompletionQueue>>& cqs,
            std::chrono::milliseconds drain) EXCLUDES(state->mu) {
    server->Shutdown(std::chrono::system_clock::now() + drain);
    while (state->pending.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    {
      MutexLock lock(state->mu);
      state->stopping = true;
    }
    for (const auto& cq : cqs) cq->Shutdown();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  std::vector<std::thread> threads_;
};

}  // namespace sloserve::grpc_protocol

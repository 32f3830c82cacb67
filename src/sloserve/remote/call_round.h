#pragma once
// Unary calls started together on a completion queue that holds nothing else, awaited
// together and given up (cancelled) together after one timeout: the health checks' rounds
// (remote::WorkerHealth). A server that does not answer delays no other's check: checked
// one after another, each hung server added a whole timeout to every round. No deadline is
// sent with the calls (it arms a timer at both ends) and no queue is made per call (a
// blocking call makes one, with its eventfd): issue 38's idle cost, docs/benchmarks.md.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"

namespace sloserve::remote {

class CallRound {
 public:
  explicit CallRound(::grpc::CompletionQueue* cq) : cq_(cq) {}
  CallRound(const CallRound&) = delete;
  CallRound& operator=(const CallRound&) = delete;

  // The tag to give the next call's Finish; `ctx` is the call's, cancelled by Await if the
  // call has not finished in time, and `status` the one its Finish fills. Calls are
  // numbered from 0 in the order added.
  void* Add(::grpc::ClientContext* ctx, const ::grpc::Status* status) {
    calls_.push_back({ctx, status});
    return reinterpret_cast<void*>(static_cast<uintptr_t>(calls_.size()));  // never null
  }

  // Waits until every added call has finished or `timeout` has passed, then cancels the
  // others and takes their (cancelled) Finish, so nothing of this round is left on the
  // queue. One status per call: OK when it answered in time with OK, else UNAVAILABLE
  // saying why ("no answer within N ms", or the call's error).
  std::vector<Status> Await(Duration timeout) {
    std::vector<bool> answered(calls_.size(), false);
    size_t left = calls_.size();
    const auto give_up = std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(timeout);
    void* tag = nullptr;
    bool ok = false;
    while (left > 0 && cq_->AsyncNext(&tag, &ok, give_up) == ::grpc::CompletionQueue::GOT_EVENT) {
      answered[reinterpret_cast<uintptr_t>(tag) - 1] = true;
      --left;
    }
    for (size_t i = 0; left > 0 && i < calls_.size(); ++i) {
      if (!answered[i]) calls_[i].ctx->TryCancel();
    }
    while (left > 0 && cq_->Next(&tag, &ok)) --left;
    std::vector<Status> out(calls_.size());
    for (size_t i = 0; i < calls_.size(); ++i) {
      if (!answered[i]) {
        out[i] = UnavailableError("no answer within " +
                                  std::to_string(static_cast<int64_t>(ToMillis(timeout))) + " ms");
      } else if (!calls_[i].status->ok()) {
        out[i] = UnavailableError(calls_[i].status->error_message());
      }
    }
    return out;
  }

  // After the last round (nothing of it is left on `cq`): shuts the queue down and takes
  // the shutdown, as gRPC requires before a queue is destroyed.
  static void ShutDown(::grpc::CompletionQueue* cq) {
    cq->Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (cq->Next(&tag, &ok)) {
    }
  }

 private:
  struct Call {
    ::grpc::ClientContext* ctx;
    const ::grpc::Status* status;
  };
  ::grpc::CompletionQueue* cq_;
  std::vector<Call> calls_;
};

}  // namespace sloserve::remote

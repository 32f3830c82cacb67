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

#include "sloserve/core/time.h"

namespace sloserve::remote {

class CallRound {
 public:
  explicit CallRound(::grpc::CompletionQueue* cq) : cq_(cq) {}
  CallRound(const CallRound&) = delete;
  CallRound& operator=(const CallRound&) = delete;

  // The tag to give the next call's Finish; `ctx` is the call's, cancelled by Await if the
  // call has not finished in time. Calls are numbered from 0 in the order added.
  void* Add(::grpc::ClientContext* ctx) {
    ctxs_.push_back(ctx);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(ctxs_.size()));  // never null
  }

  // Waits until every added call has finished or `timeout` has passed, then cancels the
  // others and takes their (cancelled) Finish, so nothing of this round is left on the
  // queue. answered[i]: call i finished in time (its status may still be an error).
  std::vector<bool> Await(Duration timeout) {
    std::vector<bool> answered(ctxs_.size(), false);
    size_t left = ctxs_.size();
    const auto give_up = std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(timeout);
    void* tag = nullptr;
    bool ok = false;
    while (left > 0 && cq_->AsyncNext(&tag, &ok, give_up) == ::grpc::CompletionQueue::GOT_EVENT) {
      answered[reinterpret_cast<uintptr_t>(tag) - 1] = true;
      --left;
    }
    if (left == 0) return answered;
    for (size_t i = 0; i < ctxs_.size(); ++i) {
      if (!answered[i]) ctxs_[i]->TryCancel();
    }
    while (left > 0 && cq_->Next(&tag, &ok)) --left;
    return answered;
  }

  // What a call not answered in time reports.
  static std::string NoAnswer(Duration timeout) {
    return "no answer within " + std::to_string(static_cast<int64_t>(ToMillis(timeout))) + " ms";
  }

 private:
  ::grpc::CompletionQueue* cq_;
  std::vector<::grpc::ClientContext*> ctxs_;
};

}  // namespace sloserve::remote

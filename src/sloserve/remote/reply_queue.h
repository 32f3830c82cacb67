#pragma once
// The completion queue the controller's replies from remote workers arrive on, and the one
// thread that drains it (docs/remote-workers.md, "Threads"). gRPC's callback API runs
// client callbacks on threads of its own (two "nexting" threads, both woken per reply on
// top of the thread that read the socket: ~3.5 wake-ups per reply measured); here one
// thread waits on one queue, so a reply wakes it and it posts the result to the engine.
#include <grpcpp/grpcpp.h>

#include <thread>

namespace sloserve::remote {

// A call waiting on a ReplyQueue: the queue's thread calls Done() once when it completes
// (gRPC's Finish tag; `ok` is true for a unary call's Finish, failures are in its status).
class ReplyTag {
 public:
  virtual void Done(bool ok) = 0;

 protected:
  ~ReplyTag() = default;
};

class ReplyQueue {
 public:
  ReplyQueue();
  // Shuts the queue down and joins its thread once every tag has been delivered: callers
  // cancel and retire their calls first (a call still in flight keeps the queue open).
  ~ReplyQueue();
  ReplyQueue(const ReplyQueue&) = delete;
  ReplyQueue& operator=(const ReplyQueue&) = delete;

  // Where to start calls (stub->PrepareAsyncX(ctx, request, cq())); their Finish tag is a
  // ReplyTag*.
  ::grpc::CompletionQueue* cq() { return &cq_; }

 private:
  ::grpc::CompletionQueue cq_;
  std::thread thread_;
};

}  // namespace sloserve::remote

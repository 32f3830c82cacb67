#pragma once
// The completion queue the controller's replies from remote workers arrive on, and who
// drains it (docs/remote-workers.md, "Threads"): the engine's driver thread itself, which
// sleeps in it (the queue is the executor's ExecutorWait), or else one thread of its own.
// gRPC's callback API ran client callbacks on two "nexting" threads of its own (both woken
// per reply on top of the thread that read the socket); a thread of the queue's own costs
// its wake-up and then the engine thread's per reply; the driver draining it costs only the
// engine thread's.
#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <thread>

#include "sloserve/engine/worker_protocol.h"
#include "sloserve/grpc/async_unary.h"

namespace sloserve::remote {

// A call waiting on a ReplyQueue: whoever drains the queue calls Done() once when it
// completes (gRPC's Finish tag; `ok` is true for a unary call's Finish, failures are in its
// status). A CallTag too, so that an inference server's queue thread can drain it when the
// calls are started on that server's queue (RemoteExecutor::DrainOn): tags are given to
// gRPC as the CallTag* (ReplyTag::Of) either kind of drainer casts them back to.
class ReplyTag : public grpc_protocol::CallTag {
 public:
  virtual void Done(bool ok) = 0;
  void Proceed(bool ok) final { Done(ok); }
  // The pointer to give gRPC as this tag (after TsanRelease of it).
  static void* Of(ReplyTag* tag) { return static_cast<grpc_protocol::CallTag*>(tag); }
};

class ReplyQueue final : public ExecutorWait {
 public:
  ReplyQueue();
  // Shuts the queue down and delivers what is left (on its thread, or on the calling one
  // if it has none): callers cancel and retire their calls first (a call still in flight
  // keeps the queue open).
  ~ReplyQueue();
  ReplyQueue(const ReplyQueue&) = delete;
  ReplyQueue& operator=(const ReplyQueue&) = delete;

  // Where to start calls (stub->PrepareAsyncX(ctx, request, cq())); their Finish tag is a
  // ReplyTag*.
  ::grpc::CompletionQueue* cq() { return &cq_; }

  // For an executor's TakeWait (driver's thread, before Attach): the driver drains the
  // queue from now on.
  ExecutorWait* TakeForDriver() {
    taken_ = true;
    return this;
  }
  // For an executor's Attach: without a driver draining it, the queue's own thread does.
  void StartThreadUnlessTaken() {
    if (!taken_) StartThread();
  }

  // Starts the queue's own thread (once; later calls do nothing): when no driver drains it
  // (not taken as its wait), and at the executor's destruction. Not concurrently with the
  // ExecutorWait calls' thread draining.
  void StartThread();

  // ExecutorWait, for the driver's thread.
  void WaitUntil(std::optional<std::chrono::steady_clock::time_point> deadline) override;
  void Poll() override;
  // An alarm due at once puts the wake tag on the queue (at most one outstanding).
  void Wake() override;

 private:
  // One event to its tag's Done.
  static void Deliver(void* tag, bool ok);
  // Delivers every event until the queue is shut down and empty.
  void DrainUntilShutdown();

  // The wake alarm's tag: delivered like a reply, it re-arms Wake.
  struct WakeTag final : ReplyTag {
    ReplyQueue* queue = nullptr;
    void Done(bool) override { queue->armed_.store(false, std::memory_order_release); }
  };

  ::grpc::CompletionQueue cq_;  // first: destroyed last, after the alarm
  WakeTag wake_tag_;
  // True from a Wake's Set until its tag is delivered: one alarm at a time (gRPC allows
  // setting an alarm again only after its tag came back); Wake sets it only from false.
  std::atomic<bool> armed_{false};
  ::grpc::Alarm alarm_;
  std::thread thread_;
  bool taken_ = false;  // TakeForDriver was called (driver's thread, before Attach)
};

}  // namespace sloserve::remote

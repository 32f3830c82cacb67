#include "sloserve/remote/reply_queue.h"

#include <pthread.h>

#include <algorithm>

#include "sloserve/core/tsan.h"

namespace sloserve::remote {

ReplyQueue::ReplyQueue() {
  wake_tag_.queue = this;
}

ReplyQueue::~ReplyQueue() {
  // No Wake sets the alarm from here on: it is armed now, and its tag (if it was armed
  // before) is delivered below.
  armed_.exchange(true, std::memory_order_acq_rel);
  cq_.Shutdown();
  if (thread_.joinable()) {
    thread_.join();
  } else {
    DrainUntilShutdown();
  }
}

void ReplyQueue::Deliver(void* tag, bool ok) {
  TsanAcquire(tag);  // pairs with the sender's TsanRelease (core/tsan.h)
  static_cast<grpc_protocol::CallTag*>(tag)->Proceed(ok);  // ReplyTag::Of
}

void ReplyQueue::DrainUntilShutdown() {
  void* tag = nullptr;
  bool ok = false;
  while (cq_.Next(&tag, &ok)) Deliver(tag, ok);
}

void ReplyQueue::StartThread() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    // Named for per-thread wake-up counts and perf (docs/benchmarks.md).
    pthread_setname_np(pthread_self(), "remote-replies");
    DrainUntilShutdown();
  });
}

void ReplyQueue::WaitUntil(std::optional<std::chrono::steady_clock::time_point> deadline) {
  gpr_timespec until = gpr_inf_future(GPR_CLOCK_MONOTONIC);
  if (deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
        *deadline - std::chrono::steady_clock::now());
    until = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                         gpr_time_from_micros(std::max<int64_t>(0, left.count()), GPR_TIMESPAN));
  }
  void* tag = nullptr;
  bool ok = false;
  // One event: others already queued are taken by the next wait, which returns at once
  // (a Poll here would cost a futex call of gRPC's even when the queue is empty).
  if (cq_.AsyncNext(&tag, &ok, until) == ::grpc::CompletionQueue::GOT_EVENT) Deliver(tag, ok);
}

void ReplyQueue::Poll() {
  void* tag = nullptr;
  bool ok = false;
  while (cq_.AsyncNext(&tag, &ok, gpr_inf_past(GPR_CLOCK_MONOTONIC)) ==
         ::grpc::CompletionQueue::GOT_EVENT) {
    Deliver(tag, ok);
  }
}

void ReplyQueue::Wake() {
  if (armed_.exchange(true, std::memory_order_acq_rel)) return;  // one is on its way
  // Due in the past, so it fires inside Set: gRPC keeps timers to the millisecond, and an
  // alarm due "now" would wait for its timer check (measured: +0.6 ms at the median).
  alarm_.Set(&cq_, gpr_inf_past(GPR_CLOCK_MONOTONIC), ReplyTag::Of(&wake_tag_));
}

}  // namespace sloserve::remote

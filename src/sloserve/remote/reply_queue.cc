#include "sloserve/remote/reply_queue.h"

#include <pthread.h>

namespace sloserve::remote {

ReplyQueue::ReplyQueue()
    : thread_([this] {
        // Named for per-thread wake-up counts and perf (docs/benchmarks.md).
        pthread_setname_np(pthread_self(), "remote-replies");
        void* tag = nullptr;
        bool ok = false;
        while (cq_.Next(&tag, &ok)) static_cast<ReplyTag*>(tag)->Done(ok);
      }) {}

ReplyQueue::~ReplyQueue() {
  cq_.Shutdown();
  thread_.join();
}

}  // namespace sloserve::remote

#include "sloserve/remote/reply_queue.h"

namespace sloserve::remote {

ReplyQueue::ReplyQueue()
    : thread_([this] {
        void* tag = nullptr;
        bool ok = false;
        while (cq_.Next(&tag, &ok)) static_cast<ReplyTag*>(tag)->Done(ok);
      }) {}

ReplyQueue::~ReplyQueue() {
  cq_.Shutdown();
  thread_.join();
}

}  // namespace sloserve::remote

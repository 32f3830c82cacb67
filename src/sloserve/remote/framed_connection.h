#pragma once
// The TCP Run channel's connection (docs/remote-workers.md, "The TCP Run channel"): frames
// of a 4-byte little-endian length and that many bytes (one serialized protobuf message)
// both ways on one socket, with no HTTP/2 framing, flow-control windows, completion queues
// or combiners between the socket and the message. Each message costs a worker one
// wake-up, one recv and one send (about a third of a gRPC stream message's CPU on
// loopback: docs/benchmarks.md).
//
// One thread per connection reads it (poll on the socket and an eventfd): each complete
// frame goes to on_frame on that thread, then (if set) on_read_done once for the frames of
// one read, so a handler can answer them together; the end (EOF, a socket error, an
// oversized frame, Close) goes to on_end once, after the last frame. Send may be called from any
// thread, on_frame's included: it writes at once when nothing is queued before it (no hand-off),
// else queues, and the thread writes the rest when the socket takes more.
//
// The handlers must not destroy the connection (its destructor joins the thread): owners
// reap ended connections from another thread.
#include <google/protobuf/message_lite.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "sloserve/core/mutex.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"

namespace sloserve::remote {

inline constexpr size_t kFrameHeaderBytes = 4;

class FramedConnection {
 public:
  struct Handlers {
    std::function<void(std::string_view frame)> on_frame;
    std::function<void(const Status& why)> on_end;
    std::function<void()> on_read_done;  // optional
  };
  // Takes `fd`, a connected stream socket (made non-blocking here). Frames longer than
  // `max_frame_bytes` end the connection (either way); so does a peer that leaves more
  // than `max_queued_bytes` unread. Start() starts the reading thread.
  FramedConnection(int fd, size_t max_frame_bytes, size_t max_queued_bytes, Handlers handlers);
  ~FramedConnection();  // Close, then waits for the thread (never from a handler)
  FramedConnection(const FramedConnection&) = delete;
  FramedConnection& operator=(const FramedConnection&) = delete;

  void Start();
  // Sends `message` as one frame. False when the connection has ended or is closing, or
  // the message is larger than a frame may be (then it ends the connection).
  bool Send(const google::protobuf::MessageLite& message) EXCLUDES(out_mu_);
  // Ends the connection: on_end gets UnavailableError(why) (unless it ended already).
  void Close(const std::string& why) EXCLUDES(out_mu_);
  // Whether on_end has been called (it is the thread's last act).
  bool ended() const { return ended_.load(std::memory_order_acquire); }

 private:
  void Run();
  // Writes what is queued (the reading thread, on POLLOUT). False on a socket error.
  bool Flush() EXCLUDES(out_mu_);
  bool SendQueuedLocked() REQUIRES(out_mu_);
  void Wake();

  const int fd_;
  const int wake_fd_;  // eventfd: Send queued bytes, or Close
  const size_t max_frame_bytes_;
  const size_t max_queued_bytes_;
  Handlers handlers_;
  std::thread thread_;

  Mutex out_mu_;
  std::string outbox_ GUARDED_BY(out_mu_);  // frames not yet taken by the socket
  size_t out_offset_ GUARDED_BY(out_mu_) = 0;
  std::string close_reason_ GUARDED_BY(out_mu_);  // set by Close (or a failed Send)
  bool closing_ GUARDED_BY(out_mu_) = false;
  std::atomic<bool> want_write_{false};
  std::atomic<bool> ended_{false};
};

// Opens a TCP connection to host:port within `timeout` (a name is resolved first).
// Returns the socket, or an error naming the address and why.
StatusOr<int> ConnectTcp(const std::string& host, uint16_t port, Duration timeout);

// The host of a "host:port" address ("[v6]:port" gives "v6").
std::string HostOf(const std::string& address);

// Accepts TCP connections on host:port (port 0: ephemeral) on a thread of its own and hands
// each socket to on_accept (on that thread).
class FramedListener {
 public:
  ~FramedListener();
  // Binds and listens; the bound port, or an error naming the address.
  StatusOr<uint16_t> Listen(const std::string& host, uint16_t port,
                            std::function<void(int fd)> on_accept);
  // Stops accepting (waits for the thread). Idempotent.
  void Stop();

 private:
  int fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::function<void(int)> on_accept_;
};

}  // namespace sloserve::remote

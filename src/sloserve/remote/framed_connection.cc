#include "sloserve/remote/framed_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

namespace sloserve::remote {
namespace {

std::string ErrnoText(int err) {
  return std::strerror(err);
}

void PutLength(char* out, uint32_t n) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
}

uint32_t GetLength(const char* in) {
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= uint32_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return n;
}

void SetNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags >= 0) (void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

void SetNoDelay(int fd) {
  int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

using AddressList = std::unique_ptr<addrinfo, decltype(&freeaddrinfo)>;

// host:port's TCP addresses (`passive`: to listen on); the error names `what` and why.
StatusOr<AddressList> Resolve(const std::string& host, uint16_t port, bool passive,
                              const std::string& what) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return UnavailableError(what + ": " + gai_strerror(rc));
  }
  return AddressList(found, &freeaddrinfo);
}

}  // namespace

FramedConnection::FramedConnection(int fd, size_t max_frame_bytes, size_t max_queued_bytes,
                                   Handlers handlers)
    : fd_(fd),
      wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      max_frame_bytes_(max_frame_bytes),
      max_queued_bytes_(max_queued_bytes),
      handlers_(std::move(handlers)) {
  SetNonBlocking(fd_);
  SetNoDelay(fd_);
}

FramedConnection::~FramedConnection() {
  Close("the connection was closed");
  if (thread_.joinable()) thread_.join();
  close(fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void FramedConnection::Start() {
  thread_ = std::thread([this] { Run(); });
}

void FramedConnection::Wake() {
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

bool FramedConnection::Send(const google::protobuf::MessageLite& message) {
  const size_t size = message.ByteSizeLong();
  MutexLock lock(out_mu_);
  if (closing_ || ended()) return false;
  if (size > max_frame_bytes_ || outbox_.size() - out_offset_ + size > max_queued_bytes_) {
    close_reason_ =
        size > max_frame_bytes_
            ? "a message of " + std::to_string(size) + " bytes is over the " +
                  std::to_string(max_frame_bytes_) + "-byte frame limit"
            : "the peer is not reading (" + std::to_string(max_queued_bytes_) + " bytes queued)";
    closing_ = true;
    (void)shutdown(fd_, SHUT_RDWR);
    Wake();
    return false;
  }
  const bool idle = out_offset_ == outbox_.size();
  if (idle) {
    outbox_.clear();
    out_offset_ = 0;
  }
  const size_t at = outbox_.size();
  outbox_.resize(at + kFrameHeaderBytes + size);
  PutLength(&outbox_[at], static_cast<uint32_t>(size));
  message.SerializeWithCachedSizesToArray(
      reinterpret_cast<uint8_t*>(&outbox_[at + kFrameHeaderBytes]));
  if (!idle) return true;  // the thread writes it after what is queued (POLLOUT)
  if (!SendQueuedLocked()) {
    closing_ = true;
    (void)shutdown(fd_, SHUT_RDWR);
    Wake();
    return false;
  }
  if (out_offset_ < outbox_.size()) {  // the socket took part of it: the thread goes on
    want_write_.store(true, std::memory_order_release);
    Wake();
  }
  return true;
}

bool FramedConnection::SendQueuedLocked() {
  while (out_offset_ < outbox_.size()) {
    const ssize_t n = send(fd_, outbox_.data() + out_offset_, outbox_.size() - out_offset_,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      out_offset_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (close_reason_.empty()) close_reason_ = "send: " + ErrnoText(errno);
    return false;
  }
  outbox_.clear();
  out_offset_ = 0;
  return true;
}

bool FramedConnection::Flush() {
  MutexLock lock(out_mu_);
  if (!SendQueuedLocked()) return false;
  want_write_.store(out_offset_ < outbox_.size(), std::memory_order_release);
  return true;
}

void FramedConnection::Close(const std::string& why) {
  {
    MutexLock lock(out_mu_);
    if (closing_) return;
    closing_ = true;
    if (close_reason_.empty()) close_reason_ = why;
  }
  (void)shutdown(fd_, SHUT_RDWR);
  Wake();
}

void FramedConnection::Run() {
  // Bytes read and not yet taken as frames: in[taken, used). Grown (zero-filled) only when a
  // partial frame fills it, not per read; let go of once empty after a large frame.
  constexpr size_t kChunk = size_t{64} << 10;
  std::vector<char> in(kChunk);
  size_t used = 0, taken = 0;
  std::string error;  // why the loop ended, when not Close's or the peer's EOF
  bool eof = false;
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (want_write_.load(std::memory_order_acquire)) fds[0].events |= POLLOUT;
    const int n = poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = "poll: " + ErrnoText(errno);
      break;
    }
    if (fds[1].revents != 0) {
      uint64_t count;
      (void)!read(wake_fd_, &count, sizeof count);
    }
    {
      MutexLock lock(out_mu_);
      if (closing_) break;
    }
    if ((fds[0].revents & POLLOUT) != 0 && !Flush()) break;
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    if (in.size() - used < kChunk) in.resize(used + kChunk);
    const ssize_t got = recv(fd_, in.data() + used, in.size() - used, 0);
    if (got == 0) {
      eof = true;
      break;
    }
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      error = "recv: " + ErrnoText(errno);
      break;
    }
    used += static_cast<size_t>(got);
    const size_t taken_before = taken;
    while (used - taken >= kFrameHeaderBytes) {
      const uint32_t length = GetLength(in.data() + taken);
      if (length > max_frame_bytes_) {
        error = "a frame of " + std::to_string(length) + " bytes is over the " +
                std::to_string(max_frame_bytes_) + "-byte limit";
        break;
      }
      if (used - taken - kFrameHeaderBytes < length) break;
      handlers_.on_frame(std::string_view(in.data() + taken + kFrameHeaderBytes, length));
      taken += kFrameHeaderBytes + length;
      MutexLock lock(out_mu_);
      if (closing_) break;  // the handler closed it (a bad frame): no frame after it runs
    }
    if (taken != taken_before && handlers_.on_read_done) handlers_.on_read_done();
    if (!error.empty()) break;
    if (taken == used) {
      used = taken = 0;
      if (in.size() > 16 * kChunk) std::vector<char>(kChunk).swap(in);
    } else {  // a partial frame: moved to the front; room grows with the bytes that came
      if (taken > 0) {
        std::memmove(in.data(), in.data() + taken, used - taken);
        used -= taken;
        taken = 0;
      }
      // Doubling as its bytes arrive, never to a header's claimed length up front: a
      // 4-byte header saying 64 MiB must not make this end hold 64 MiB.
      if (used * 2 > in.size()) in.resize(std::max(used * 2, in.size() + kChunk));
    }
  }
  Status why;
  {
    MutexLock lock(out_mu_);
    closing_ = true;
    if (!close_reason_.empty()) {
      why = UnavailableError(close_reason_);
    } else if (!error.empty()) {
      why = UnavailableError(error);
    } else {
      why = UnavailableError(eof ? "the peer closed the connection" : "the connection ended");
    }
  }
  (void)shutdown(fd_, SHUT_RDWR);
  handlers_.on_end(why);
  ended_.store(true, std::memory_order_release);
}

std::string HostOf(const std::string& address) {
  const size_t colon = address.rfind(':');
  std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

StatusOr<int> ConnectTcp(const std::string& host, uint16_t port, Duration timeout) {
  const std::string name = host + ":" + std::to_string(port);
  ASSIGN_OR_RETURN(const AddressList list,
                   Resolve(host, port, /*passive=*/false, "TCP Run channel to " + name));
  std::string last = "no address";
  for (addrinfo* a = list.get(); a != nullptr; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last = "socket: " + ErrnoText(errno);
      continue;
    }
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
      rc = poll(&p, 1, static_cast<int>(std::max<int64_t>(1, ms)));
      if (rc == 0) {
        close(fd);
        last = "no connection within " + std::to_string(ms) + " ms";
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      (void)getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (rc < 0 || err != 0) {
        close(fd);
        last = "connect: " + ErrnoText(rc < 0 ? errno : err);
        continue;
      }
      return fd;
    }
    if (rc == 0) return fd;
    last = "connect: " + ErrnoText(errno);
    close(fd);
  }
  return UnavailableError("TCP Run channel to " + name + ": " + last);
}

FramedListener::~FramedListener() {
  Stop();
}

StatusOr<uint16_t> FramedListener::Listen(const std::string& host, uint16_t port,
                                          std::function<void(int)> on_accept) {
  const std::string name = host + ":" + std::to_string(port);
  ASSIGN_OR_RETURN(const AddressList list, Resolve(host, port, /*passive=*/true,
                                                   "TCP Run channel: cannot listen on " + name));
  const addrinfo* found = list.get();
  const int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  int one = 1;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(fd, found->ai_addr, found->ai_addrlen) != 0 || listen(fd, 64) != 0) {
    const std::string why = ErrnoText(errno);
    if (fd >= 0) close(fd);
    return UnavailableError("TCP Run channel: cannot listen on " + name + ": " + why);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  (void)getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  const uint16_t bound_port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  fd_ = fd;
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  on_accept_ = std::move(on_accept);
  thread_ = std::thread([this] {
    for (;;) {
      pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
      if (fds[1].revents != 0) return;  // Stop
      if ((fds[0].revents & POLLIN) == 0) continue;
      const int conn = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn >= 0) on_accept_(conn);
    }
  });
  return bound_port;
}

void FramedListener::Stop() {
  if (fd_ < 0) return;
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  close(fd_);
  close(wake_fd_);
  fd_ = wake_fd_ = -1;
}

}  // namespace sloserve::remote

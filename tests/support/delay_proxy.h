#pragma once
// A TCP forwarder that adds a fixed one-way delay, for tests of links between network
// namespaces where `tc qdisc ... netem` is unavailable (no sch_netem module). It listens in
// a given network namespace and forwards every connection to a target address; each
// chunk of bytes read from one side is written to the other `delay` after it arrived, in
// both directions, so a request-reply exchange through it takes at least 2 x delay more.
// A side that closes (or is reset, e.g. its process was killed) closes the other side once
// the bytes already read are delivered. One thread accepts; each connection has one thread
// per direction.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sloserve::testing {

// Moves the calling thread into the network namespace `name` (`ip netns add NAME`): the
// sockets it creates from then on belong to that namespace. False when it cannot.
inline bool EnterNetNamespace(const std::string& name) {
  const int fd = open(("/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = setns(fd, CLONE_NEWNET) == 0;
  close(fd);
  return ok;
}

class DelayProxy {
 public:
  using Clock = std::chrono::steady_clock;

  // Listens on listen_ip:listen_port inside network namespace `netns` ("" = the caller's)
  // and forwards to target_ip:target_port (connected from the same namespace).
  DelayProxy(std::string netns, std::string listen_ip, uint16_t listen_port, std::string target_ip,
             uint16_t target_port, std::chrono::microseconds delay)
      : target_ip_(std::move(target_ip)), target_port_(target_port), delay_(delay) {
    std::promise<std::string> ready;
    std::future<std::string> started = ready.get_future();
    acceptor_ = std::thread([this, netns, listen_ip, listen_port, &ready] {
      if (!netns.empty() && !EnterNetNamespace(netns)) {
        ready.set_value("cannot enter network namespace " + netns);
        return;
      }
      listen_fd_ = Listen(listen_ip, listen_port);
      if (listen_fd_ < 0) {
        ready.set_value("cannot listen on " + listen_ip + ":" + std::to_string(listen_port));
        return;
      }
      sockaddr_in bound{};
      socklen_t len = sizeof bound;
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
      port_ = ntohs(bound.sin_port);
      ready.set_value("");
      AcceptLoop();
    });
    error_ = started.get();
  }
  ~DelayProxy() {
    stop_ = true;
    if (acceptor_.joinable()) acceptor_.join();
    for (auto& c : connections_) {
      for (std::thread& t : c->pumps) t.join();
      close(c->client);
      close(c->server);
    }
    if (listen_fd_ >= 0) close(listen_fd_);
  }
  DelayProxy(const DelayProxy&) = delete;
  DelayProxy& operator=(const DelayProxy&) = delete;

  // Empty when listening; otherwise what failed.
  const std::string& error() const { return error_; }
  // The port it listens on (listen_port, or the one picked for 0).
  uint16_t port() const { return port_; }
  // Bytes forwarded so far, both directions (thread-safe).
  int64_t bytes_forwarded() const { return bytes_.load(); }
  // Connections accepted and connected to the target so far (thread-safe).
  int connections() const { return connected_.load(); }

 private:
  struct Connection {
    int client = -1, server = -1;
    std::thread pumps[2];
  };

  static int Listen(const std::string& ip, uint16_t port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    if (inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1 ||
        bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(fd, 64) != 0) {
      close(fd);
      return -1;
    }
    return fd;
  }

  int ConnectTarget() const {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(target_port_);
    inet_pton(AF_INET, target_ip_.c_str(), &addr.sin_addr);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      close(fd);
      return -1;
    }
    return fd;
  }

  void AcceptLoop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      const int server = ConnectTarget();  // refused when the target is gone: close
      if (server < 0) {
        close(client);
        continue;
      }
      const int one = 1;  // no Nagle: the delay is the only one added
      setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ++connected_;
      auto c = std::make_unique<Connection>();
      c->client = client;
      c->server = server;
      c->pumps[0] = std::thread([this, client, server] { Pump(client, server); });
      c->pumps[1] = std::thread([this, client, server] { Pump(server, client); });
      connections_.push_back(std::move(c));
    }
  }

  // One direction: bytes read from `from` are written to `to` `delay_` after they arrived.
  void Pump(int from, int to) {
    std::deque<std::pair<Clock::time_point, std::string>> pending;
    bool eof = false;
    char buf[65536];
    while (!stop_) {
      // Wake for new bytes, the next delivery, or every 20 ms to see stop_.
      auto wait = std::chrono::microseconds(20000);
      if (!pending.empty()) {
        wait = std::clamp(std::chrono::duration_cast<std::chrono::microseconds>(
                              pending.front().first - Clock::now()),
                          std::chrono::microseconds(0), wait);
      }
      const timespec ts{0, static_cast<long>(wait.count()) * 1000};
      pollfd p{from, POLLIN, 0};
      if (eof) {
        std::this_thread::sleep_for(wait);  // only deliveries left
      } else if (ppoll(&p, 1, &ts, nullptr) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR))) {
        const ssize_t n = recv(from, buf, sizeof buf, 0);
        if (n <= 0) {
          eof = true;
        } else {
          pending.emplace_back(Clock::now() + delay_, std::string(buf, static_cast<size_t>(n)));
        }
      }
      while (!pending.empty() && pending.front().first <= Clock::now()) {
        const std::string& chunk = pending.front().second;
        for (size_t sent = 0; sent < chunk.size();) {
          const ssize_t n = send(to, chunk.data() + sent, chunk.size() - sent, MSG_NOSIGNAL);
          if (n <= 0) {  // the other side is gone: end both directions
            shutdown(from, SHUT_RDWR);
            shutdown(to, SHUT_RDWR);
            return;
          }
          sent += static_cast<size_t>(n);
        }
        bytes_ += static_cast<int64_t>(chunk.size());
        pending.pop_front();
      }
      if (eof && pending.empty()) {
        // Closed or reset: pass it on (both directions, as a killed process's socket does).
        shutdown(to, SHUT_RDWR);
        shutdown(from, SHUT_RDWR);
        return;
      }
    }
  }

  const std::string target_ip_;
  const uint16_t target_port_;
  const std::chrono::microseconds delay_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> bytes_{0};
  std::atomic<int> connected_{0};
  int listen_fd_ = -1;
  uint16_t port_ = 0;  // set before the constructor returns
  std::string error_;
  std::thread acceptor_;
  std::vector<std::unique_ptr<Connection>> connections_;  // acceptor thread, then ~DelayProxy
};

}  // namespace sloserve::testing

// Loadgen says when it is the bottleneck: a warning when the p99 send lag exceeds 10% of
// the SLO or when requests waited because the connection cap was reached. The verdict is
// checked on constructed recorder data and on a real run against a local server that holds
// every request for 40 ms, with a cap of one connection (deterministic: the requests are
// all due at once, so all but one must wait whatever the machine's speed).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/loadgen/load_generator.h"
#include "sloserve/loadgen/load_report.h"

namespace sloserve {
namespace {

using json = nlohmann::json;

LoadReport WithLags(const std::vector<Duration>& lags, int64_t connection_waits, double slo_ms,
                    int max_connections) {
  LoadRecorder rec;
  for (Duration lag : lags) {
    rec.RecordSendLag(lag);
    rec.RecordOk(Millis(5), "v", /*met_slo=*/true, slo_ms);
  }
  for (int64_t k = 0; k < connection_waits; ++k) rec.RecordConnectionWait();
  const auto n = static_cast<int64_t>(lags.size());
  LoadReport r = rec.Finish(n, n, Seconds(1), Seconds(1), slo_ms, max_connections);
  AssessClientBottleneck(r, slo_ms, max_connections);
  return r;
}

TEST(ClientBottleneckTest, SendLagP99AboveTenPercentOfTheSloWarns) {
  std::vector<Duration> lags(95, Duration::zero());
  lags.insert(lags.end(), 5, Millis(30));  // p99 (nearest rank, 100 sends) = 30 ms
  const LoadReport r = WithLags(lags, 0, /*slo_ms=*/100, /*max_connections=*/64);
  const ClientBottleneck& b = r.client_bottleneck;
  EXPECT_DOUBLE_EQ(b.send_lag_p99_ms, 30);
  EXPECT_DOUBLE_EQ(b.send_lag_max_ms, 30);
  EXPECT_DOUBLE_EQ(b.send_lag_limit_ms, 10);
  EXPECT_TRUE(b.send_lag_exceeded);
  EXPECT_FALSE(b.connection_cap_reached);
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_EQ(b.warnings[0],
            "client is the bottleneck: p99 send lag 30.00 ms exceeds 10% of the 100.0 ms SLO "
            "(10.00 ms); latencies include time the requests waited inside loadgen");
  EXPECT_NE(r.ToText().find("WARNING    client is the bottleneck: p99 send lag"), std::string::npos)
      << r.ToText();
  const json j = r.ToJson();
  ASSERT_TRUE(j.contains("client_bottleneck")) << j.dump(2);
  EXPECT_EQ(j["client_bottleneck"]["send_lag_p99_ms"], 30.0);
  EXPECT_EQ(j["client_bottleneck"]["send_lag_exceeded"], true);
  EXPECT_EQ(j["client_bottleneck"]["connection_cap_reached"], false);
  EXPECT_EQ(j["client_bottleneck"]["warnings"].size(), 1u);
}

TEST(ClientBottleneckTest, LagWithinTenPercentOrUnknownSloIsNotAWarning) {
  std::vector<Duration> lags(99, Millis(1));
  lags.push_back(Millis(500));  // one outlier: the max, not the p99
  const LoadReport r = WithLags(lags, 0, /*slo_ms=*/100, 64);
  EXPECT_DOUBLE_EQ(r.client_bottleneck.send_lag_p99_ms, 1);
  EXPECT_DOUBLE_EQ(r.client_bottleneck.send_lag_max_ms, 500);
  EXPECT_FALSE(r.client_bottleneck.is_bottleneck());
  EXPECT_EQ(r.ToText().find("WARNING"), std::string::npos) << r.ToText();
  EXPECT_TRUE(r.ToJson()["client_bottleneck"]["warnings"].empty());

  // Exactly at the limit is not above it.
  EXPECT_FALSE(WithLags(std::vector<Duration>(10, Millis(10)), 0, 100, 64)
                   .client_bottleneck.send_lag_exceeded);
  // No SLO known: the lag is measured but not judged.
  const LoadReport unknown = WithLags(std::vector<Duration>(10, Seconds(1)), 0, 0, 64);
  EXPECT_FALSE(unknown.client_bottleneck.is_bottleneck());
  EXPECT_TRUE(unknown.ToJson()["client_bottleneck"]["send_lag_limit_ms"].is_null());
}

TEST(ClientBottleneckTest, ConnectionWaitsWarnThatTheCapWasReached) {
  const LoadReport r = WithLags(std::vector<Duration>(10, Duration::zero()), 3, 100, 8);
  const ClientBottleneck& b = r.client_bottleneck;
  EXPECT_TRUE(b.connection_cap_reached);
  EXPECT_FALSE(b.send_lag_exceeded);
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_EQ(b.warnings[0],
            "client is the bottleneck: connection cap reached (8 connections busy); 3 requests "
            "waited for a free connection (raise --max-connections)");
  const json j = r.ToJson()["client_bottleneck"];
  EXPECT_EQ(j["waited_for_connection"], 3);
  EXPECT_EQ(j["max_connections"], 8);
  EXPECT_EQ(j["connection_cap_reached"], true);
}

// The live warning (loadgen's progress) and the final verdict share one rule
// (SendLagExceeded on a p99): a single late send, which the final p99 ignores, never
// warns mid-run, and a lag the final verdict names is warned about once enough sends lag.
TEST(ClientBottleneckTest, LiveWarningFollowsTheFinalVerdictsRule) {
  constexpr int64_t kSends = 200;  // nearest-rank p99 of 200: the 198th smallest
  constexpr double kSlo = 100;     // limit 10 ms
  LoadRecorder spike;
  spike.RecordSendLag(Millis(500));  // the first send is very late, all others on time
  EXPECT_EQ(spike.SendLagP99(kSends), Duration::zero());
  bool warned = SendLagExceeded(ToMillis(spike.SendLagP99(kSends)), kSlo);
  for (int64_t i = 1; i < kSends; ++i) {
    spike.RecordSendLag(Duration::zero());
    warned = warned || SendLagExceeded(ToMillis(spike.SendLagP99(kSends)), kSlo);
  }
  EXPECT_FALSE(warned) << "a single spike warned live";
  LoadReport r = spike.Finish(kSends, kSends, Seconds(1), Seconds(1), kSlo, 8);
  AssessClientBottleneck(r, kSlo, 8);
  EXPECT_FALSE(r.client_bottleneck.send_lag_exceeded);
  EXPECT_DOUBLE_EQ(r.client_bottleneck.send_lag_max_ms, 500);

  // Three late sends of 200 put the p99 above the limit: the live check says so as soon
  // as the third is recorded, and the final verdict agrees.
  LoadRecorder lagging;
  int64_t warned_at = -1;
  for (int64_t i = 0; i < kSends; ++i) {
    lagging.RecordSendLag(i % 50 == 10 && i < 150 ? Millis(30) : Duration::zero());
    if (warned_at < 0 && SendLagExceeded(ToMillis(lagging.SendLagP99(kSends)), kSlo)) warned_at = i;
  }
  EXPECT_EQ(warned_at, 110);
  LoadReport late = lagging.Finish(kSends, kSends, Seconds(1), Seconds(1), kSlo, 8);
  AssessClientBottleneck(late, kSlo, 8);
  EXPECT_TRUE(late.client_bottleneck.send_lag_exceeded);
  EXPECT_DOUBLE_EQ(late.client_bottleneck.send_lag_p99_ms, 30);
}

// A minimal HTTP/1.1 keep-alive server on 127.0.0.1 that holds every request for `hold`
// before answering a KServe-like 200. One thread per connection.
class SlowServer {
 public:
  explicit SlowServer(std::chrono::milliseconds hold) : hold_(hold) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listen_fd_, 64) != 0) {
      std::abort();
    }
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~SlowServer() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    acceptor_.join();
    std::vector<int> fds;
    std::vector<std::thread> conns;
    {
      MutexLock lock(mu_);
      for (int fd : conn_fds_) ::shutdown(fd, SHUT_RDWR);
      fds.swap(conn_fds_);
      conns.swap(conns_);
    }
    for (auto& t : conns) t.join();
    for (int fd : fds) ::close(fd);  // Serve never closes: no fd reuse while in use
  }
  uint16_t port() const { return port_; }
  int answered() const { return answered_.load(); }

 private:
  void AcceptLoop() EXCLUDES(mu_) {
    for (;;) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      MutexLock lock(mu_);
      if (stopping_) {
        ::close(fd);
        return;
      }
      conn_fds_.push_back(fd);
      conns_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  // Answers requests on `fd` until the peer closes it (or the destructor shuts it down).
  void Serve(int fd) {
    std::string in;
    char buf[4096];
    for (;;) {
      size_t end = in.find("\r\n\r\n");
      while (end == std::string::npos) {
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n <= 0) return;
        in.append(buf, static_cast<size_t>(n));
        end = in.find("\r\n\r\n");
      }
      size_t body = 0;
      for (const char* key : {"Content-Length: ", "content-length: "}) {
        if (const size_t k = in.find(key); k != std::string::npos && k < end) {
          body = std::strtoul(in.c_str() + k + std::char_traits<char>::length(key), nullptr, 10);
        }
      }
      while (in.size() < end + 4 + body) {
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n <= 0) return;
        in.append(buf, static_cast<size_t>(n));
      }
      in.erase(0, end + 4 + body);
      std::this_thread::sleep_for(hold_);
      const std::string payload =
          R"({"model_name":"image","outputs":[],"parameters":{"variant":"v","met_slo":true}})";
      const std::string response =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
          "Content-Length: " +
          std::to_string(payload.size()) + "\r\n\r\n" + payload;
      if (::write(fd, response.data(), response.size()) != static_cast<ssize_t>(response.size()))
        return;
      ++answered_;
    }
  }

  std::chrono::milliseconds hold_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> answered_{0};
  Mutex mu_;
  std::vector<int> conn_fds_ GUARDED_BY(mu_);
  std::vector<std::thread> conns_ GUARDED_BY(mu_);
  std::thread acceptor_;
};

LoadOptions SixAtOnce(uint16_t port, int connections, int max_connections) {
  LoadOptions o;
  o.port = port;
  o.task = "image";
  o.shape = {1, 4};
  o.connections = connections;
  o.max_connections = max_connections;
  o.schedule.assign(6, Duration::zero());  // all due at the start
  o.timeout = Seconds(20);
  return o;
}

TEST(LoadGenBottleneckTest, OneConnectionToASlowServerIsReportedAsTheClientsBottleneck) {
  SlowServer server(std::chrono::milliseconds(40));
  LoadOptions o = SixAtOnce(server.port(), /*connections=*/1, /*max_connections=*/1);
  o.default_slo_ms = 100;  // not sent: the server's default SLO, as the CLI reads it
  auto report = RunLoad(o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->ok, 6);
  const ClientBottleneck& b = report->client_bottleneck;
  // The first request takes the only connection; the other five find it busy.
  EXPECT_EQ(b.waited_for_connection, 5);
  EXPECT_TRUE(b.connection_cap_reached);
  // The last one goes out after five 40 ms holds: p99 of 6 sends is that one.
  EXPECT_GE(b.send_lag_p99_ms, 5 * 40 - 1);
  EXPECT_DOUBLE_EQ(b.slo_ms, 100);
  EXPECT_TRUE(b.send_lag_exceeded);
  ASSERT_EQ(b.warnings.size(), 2u);
  EXPECT_NE(b.warnings[0].find("p99 send lag"), std::string::npos) << b.warnings[0];
  EXPECT_NE(b.warnings[1].find("connection cap reached (1 connections busy); 5 requests"),
            std::string::npos)
      << b.warnings[1];
  const json j = report->ToJson();
  EXPECT_EQ(j["client_bottleneck"]["connection_cap_reached"], true);
  EXPECT_EQ(j["client_bottleneck"]["warnings"].size(), 2u);
  EXPECT_NE(report->ToText().find("WARNING"), std::string::npos) << report->ToText();
}

TEST(LoadGenBottleneckTest, EnoughConnectionsAndALooseSloAreNotABottleneck) {
  SlowServer server(std::chrono::milliseconds(40));
  LoadOptions o = SixAtOnce(server.port(), /*connections=*/6, /*max_connections=*/6);
  o.slo_ms = 60'000;  // sent; a 6 s lag limit no healthy send comes near
  auto report = RunLoad(o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->ok, 6);
  EXPECT_EQ(report->client_bottleneck.waited_for_connection, 0);
  EXPECT_FALSE(report->client_bottleneck.is_bottleneck())
      << report->client_bottleneck.ToJson().dump();
}

}  // namespace
}  // namespace sloserve

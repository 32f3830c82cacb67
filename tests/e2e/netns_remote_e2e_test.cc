// Remote workers across "hosts" without a cluster (issue 14 item 4): the controller
// (`sloserve serve`) and three `sloserve worker`s each in their own network namespace,
// joined by veth pairs (controller 10.77.K.1, worker K 10.77.K.2), every link with 2 ms of
// one-way delay: `tc qdisc netem` when the kernel has it, otherwise a delay proxy on the
// controller's end of each link (support/delay_proxy.h; the controller dials the proxy,
// which forwards over the veth). Requests arrive over HTTP at 60/s for 3 s; halfway, one
// worker is killed (SIGKILL). Every request gets one answer, the engine ends every
// arrival once, and the two survivors take the load. Skipped (with the reason) where
// network namespaces cannot be made: not root, no `ip`, no netns support.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/sloserve_paths.h"
#include "support/counts_summary.h"
#include "support/delay_proxy.h"
#include "support/http_get.h"
#include "support/net_namespaces.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

using testing::Subprocess;

using testing::kBin;
constexpr int kWorkers = 3;
constexpr int kKilled = 2;                             // the worker killed mid-run
constexpr uint16_t kWorkerPort = 9000;                 // in each worker's namespace
constexpr uint16_t kProxyPort = 9100;                  // the proxies, in the controller's namespace
constexpr uint16_t kHttpPort = 8000;                   // the controller's, in its namespace
constexpr auto kDelay = std::chrono::milliseconds(2);  // one way, each link

std::string WriteRemoteConfig(const testing::ScopedTempDir& dir) {
  const std::string path = dir.File("netns.yaml");
  std::ofstream(path) << "suite: ramsis-image\n"
                         "task: image\n"
                         "hardware: n1-4cpu\n"
                         "workers: 3\n"
                         "slo_ms: 1000\n"
                         "seed: 1\n"
                         "executor: {latency: sample}\n"
                         "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                         "selection: fixed, variant: resnet18}\n"
                         "server: {input_shape: \"-1,16\"}\n";
  return path;
}

std::string Subnet(int k, int host) {
  return "10.77." + std::to_string(k) + "." + std::to_string(host);
}

// A counter from the controller's /metrics, read from inside its namespace (-1 if absent).
int64_t Metric(const std::string& ns, const std::string& series) {
  int64_t value = -1;
  std::thread reader([&] {
    if (!testing::EnterNetNamespace(ns)) return;
    const std::string m = testing::HttpGetBody(kHttpPort, "/metrics");
    const size_t at = m.find("\n" + series + " ");
    if (at != std::string::npos) value = std::llround(std::stod(m.substr(at + series.size() + 2)));
  });
  reader.join();
  return value;
}

// Requests sent at fixed times by a pool of client threads inside the controller's
// namespace; each records who answered ("w0".., "error", or "none" without an answer).
class Clients {
 public:
  Clients(std::string ns, int threads) {
    for (int i = 0; i < threads; ++i) {
      pool_.emplace_back([this, ns] { Run(ns); });
    }
  }
  ~Clients() { Finish(); }

  void Send(bool after_kill) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(after_kill);
    ++sent_;
    cv_.notify_one();
  }
  // Waits for every request to end; joins the pool.
  void Finish() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
      cv_.notify_all();
    }
    for (std::thread& t : pool_) {
      if (t.joinable()) t.join();
    }
  }

  std::mutex mu_;
  int64_t sent_ = 0, entered_ = 0;
  std::map<std::string, int64_t> before_, after_;  // answers by who, before/after the kill

 private:
  void Run(const std::string& ns) {
    const bool entered = testing::EnterNetNamespace(ns);
    if (entered) {
      std::lock_guard<std::mutex> lock(mu_);
      ++entered_;
    }
    const std::string body = nlohmann::json{{"inputs",
                                             {{{"name", "input"},
                                               {"shape", {1, 16}},
                                               {"datatype", "FP32"},
                                               {"data", std::vector<float>(16, 0.5f)}}}}}
                                 .dump();
    for (;;) {
      bool after_kill = false;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return closed_ || !queue_.empty(); });
        if (queue_.empty()) return;
        after_kill = queue_.front();
        queue_.pop_front();
      }
      const std::string answer =
          entered ? testing::HttpPostBody(kHttpPort, "/v2/models/image/infer", body) : "";
      const auto doc = nlohmann::json::parse(answer, nullptr, false);
      std::string who = "none";
      if (doc.is_object() && doc.contains("parameters") && doc["parameters"].contains("worker")) {
        who = doc["parameters"]["worker"].get<std::string>();
      } else if (doc.is_object() && doc.contains("error")) {
        who = "error";
      }
      std::lock_guard<std::mutex> lock(mu_);
      ++(after_kill ? after_ : before_)[who];
    }
  }

  std::condition_variable cv_;
  std::deque<bool> queue_;
  bool closed_ = false;
  std::vector<std::thread> pool_;
};

// The proxy itself, on 127.0.0.1 of this namespace: bytes pass unchanged both ways, a
// round trip takes at least 2 x its delay (a lower bound: it never delivers early), and
// the target closing its side closes the client's.
TEST(DelayProxy, DelaysEachDirectionAndPassesOnAClose) {
  const int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(server, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(server, 4), 0);
  ASSERT_EQ(getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  // The target: echoes one message, then closes.
  std::thread echo([server] {
    const int c = accept(server, nullptr, nullptr);
    char buf[64];
    const ssize_t n = c < 0 ? -1 : recv(c, buf, sizeof buf, 0);
    if (n > 0) send(c, buf, static_cast<size_t>(n), MSG_NOSIGNAL);
    if (c >= 0) close(c);
  });
  const auto delay = std::chrono::milliseconds(20);
  testing::DelayProxy proxy("", "127.0.0.1", 0, "127.0.0.1", ntohs(addr.sin_port), delay);
  ASSERT_EQ(proxy.error(), "");
  const int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval timeout{10, 0};  // never hang on a broken proxy
  setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in to = addr;
  to.sin_port = htons(proxy.port());
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(send(client, "ping", 4, MSG_NOSIGNAL), 4);
  std::string got;
  char buf[64];
  for (ssize_t n; got.size() < 4 && (n = recv(client, buf, sizeof buf, 0)) > 0;) {
    got.append(buf, static_cast<size_t>(n));
  }
  const auto round_trip = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(got, "ping");
  EXPECT_GE(round_trip, 2 * delay);
  EXPECT_EQ(recv(client, buf, sizeof buf, 0), 0);  // the target closed: so does the proxy
  EXPECT_EQ(proxy.connections(), 1);
  // Counted after each write: the last count may trail the client's read by a moment.
  for (int i = 0; i < 500 && proxy.bytes_forwarded() < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(proxy.bytes_forwarded(), 8);
  echo.join();
  close(client);
  close(server);
}

TEST(NetnsRemoteE2E, KilledWorkerOnADelayedLinkLeavesTheLoadToTheSurvivors) {
  testing::NetNamespaces net("slonet");
  if (!net.error().empty()) GTEST_SKIP() << "network namespaces unavailable: " << net.error();
  const std::string ctl = net.Add("c");
  std::vector<std::string> worker_ns;
  for (int k = 0; k < kWorkers; ++k) {
    worker_ns.push_back(net.Add("w" + std::to_string(k)));
    net.Link(ctl, "c" + std::to_string(k), Subnet(k, 1) + "/24", worker_ns[k],
             "w" + std::to_string(k), Subnet(k, 2) + "/24");
  }
  if (!net.error().empty()) GTEST_SKIP() << "network namespaces unavailable: " << net.error();

  // Delay: netem on both ends of every link where the kernel has it, else the proxies.
  bool netem = true;
  for (int k = 0; k < kWorkers && netem; ++k) {
    for (const auto& [ns, dev] : {std::pair{ctl, "c" + std::to_string(k)},
                                  std::pair{worker_ns[k], "w" + std::to_string(k)}}) {
      netem = netem && testing::RunProcess({net.Tool("tc"), "-n", ns, "qdisc", "add", "dev", dev,
                                            "root", "netem", "delay", "2ms"})
                               .exit_code == 0;
    }
  }
  std::cerr << "link delay: " << (netem ? "tc netem" : "delay proxy (no tc netem)") << ", "
            << kDelay.count() << " ms one way\n";
  std::vector<std::unique_ptr<testing::DelayProxy>> proxies;
  std::string addresses;
  for (int k = 0; k < kWorkers; ++k) {
    std::string address = Subnet(k, 2) + ":" + std::to_string(kWorkerPort);
    if (!netem) {
      proxies.push_back(std::make_unique<testing::DelayProxy>(ctl, Subnet(k, 1), kProxyPort,
                                                              Subnet(k, 2), kWorkerPort, kDelay));
      ASSERT_EQ(proxies.back()->error(), "");
      address = Subnet(k, 1) + ":" + std::to_string(kProxyPort);
    }
    addresses += (addresses.empty() ? "" : ",") + address;
  }

  testing::ScopedTempDir dir("netns-e2e");
  const std::string config = WriteRemoteConfig(dir);
  std::vector<std::unique_ptr<Subprocess>> workers;
  for (int k = 0; k < kWorkers; ++k) {
    workers.push_back(std::make_unique<Subprocess>(net.Exec(
        worker_ns[k], {kBin, "worker", config, "--listen",
                       Subnet(k, 2) + ":" + std::to_string(kWorkerPort), "--duration", "120"})));
    ASSERT_TRUE(workers[k]->WaitForStderr("listening on grpc://", std::chrono::seconds(30)))
        << workers[k]->err();
  }
  // clang-format off
  Subprocess serve(net.Exec(ctl, {kBin, "serve", config, "--port", std::to_string(kHttpPort),
      "--set", "server.remote_workers=" + addresses, "--duration", "120",
      "--set", "server.remote_health_interval_ms=100",
      "--set", "server.remote_reconnect_backoff_ms=500"}));
  // clang-format on
  ASSERT_TRUE(serve.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << serve.err();

  // 3 s at 60 requests/s; the worker is killed after 1.5 s.
  constexpr int kRequests = 180, kKillAt = 90;
  std::atomic<bool> killed{false};
  {
    Clients clients(ctl, 12);
    const auto period = std::chrono::microseconds(1000000 / 60);
    auto next = std::chrono::steady_clock::now();
    for (int i = 0; i < kRequests; ++i) {
      if (i == kKillAt) {
        workers[kKilled]->Signal(SIGKILL);
        workers[kKilled]->Wait();
        killed = true;
      }
      clients.Send(killed.load());
      next += period;
      std::this_thread::sleep_until(next);
    }
    clients.Finish();
    std::lock_guard<std::mutex> lock(clients.mu_);
    ASSERT_EQ(clients.entered_, 12) << "client threads could not enter " << ctl;
    const std::string answers = "before the kill: " + testing::CountsSummary(clients.before_) +
                                "; after: " + testing::CountsSummary(clients.after_);
    std::cerr << answers << "\n";
    // Every request got an answer (served, or refused with an error body).
    EXPECT_EQ(clients.before_["none"] + clients.after_["none"], 0) << answers;
    // Before the kill every worker served.
    for (int k = 0; k < kWorkers; ++k)
      EXPECT_GT(clients.before_["w" + std::to_string(k)], 0) << answers;
    // After it, nothing was served by the dead worker, both survivors served, and most
    // requests were served (two thirds; without failover a third is lost).
    const std::string dead = "w" + std::to_string(kKilled);
    EXPECT_EQ(clients.after_[dead], 0) << answers;
    int64_t survivors = 0;
    for (int k = 0; k < kWorkers; ++k) {
      if (k == kKilled) continue;
      EXPECT_GT(clients.after_["w" + std::to_string(k)], 0) << answers;
      survivors += clients.after_["w" + std::to_string(k)];
    }
    EXPECT_GE(3 * survivors, 2 * (kRequests - kKillAt)) << answers << "\n" << serve.err();
  }
  EXPECT_TRUE(serve.WaitForStderr("is down", std::chrono::seconds(5))) << serve.err();
  // The engine ended every query it admitted exactly once.
  const int64_t arrived = Metric(ctl, "sloserve_queries_arrived_total");
  int64_t ended = 0;
  for (const char* outcome : {"met", "late", "dropped"}) {
    ended += std::max<int64_t>(
        0,
        Metric(ctl, std::string("sloserve_queries_finished_total{outcome=\"") + outcome + "\"}"));
  }
  EXPECT_EQ(arrived, kRequests);
  EXPECT_EQ(ended, arrived);
  // The links carried the traffic (through the proxies when they delay it).
  for (const auto& proxy : proxies) EXPECT_GT(proxy->bytes_forwarded(), 0);
  serve.Signal(SIGTERM);
  serve.Wait();
}

}  // namespace
}  // namespace sloserve

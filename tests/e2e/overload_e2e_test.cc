// End-to-end overload tests (issue 16, docs/admission.md), 127.0.0.1 only and bounded in
// time: a small emulated deployment (2 workers of one fixed variant, so capacity is tens
// of requests per second) under twice its capacity sheds with 429 + Retry-After while
// the admitted requests meet the SLO; SIGTERM under load answers every request it read.
// No test asserts throughput: capacity comes from `sloserve sim` of the same config.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "e2e/sloserve_paths.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/process_rss.h"
#include "support/sanitized.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

using testing::RunProcess;
using testing::Subprocess;

using testing::kBin;

std::string WriteConfig(const testing::ScopedTempDir& dir) {
  const std::string path = dir.File("overload.yaml");
  std::ofstream(path) << "suite: ramsis-image\n"
                         "task: image\n"
                         "hardware: n1-4cpu\n"
                         "workers: 2\n"
                         "slo_ms: 150\n"
                         "seed: 1\n"
                         "duration_s: 3\n"
                         "workload: {arrival: poisson, load_qps: 5000}\n"
                         "executor: {latency: sample}\n"
                         "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                         "selection: fixed, variant: efficientnet_b0}\n"
                         "server: {input_shape: \"-1,16\"}\n";
  return path;
}

// One POST over HTTP/1.0 (the server closes after answering): the whole response, or ""
// when the connection failed or closed without one. `sent` says whether the request
// was written completely.
std::string PostInfer(uint16_t port, const std::string& body, bool* sent) {
  return testing::HttpExchange(port, testing::HttpPostRequest("/v2/models/image/infer", body),
                               sent);
}

// Sends one request and closes the connection at once, without reading the answer.
bool SendAndHangUp(uint16_t port, const std::string& body) {
  const int fd = testing::ConnectLoopback(port);
  if (fd < 0) return false;
  const std::string request = testing::HttpPostRequest("/v2/models/image/infer", body);
  const bool sent = send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
                    static_cast<ssize_t>(request.size());
  close(fd);
  return sent;
}

std::string InferBody() {
  nlohmann::json input = {{"name", "input"},
                          {"shape", {1, 16}},
                          {"datatype", "FP32"},
                          {"data", std::vector<double>(16, 0.5)}};
  return nlohmann::json{{"inputs", {input}}}.dump();
}

struct Served {
  std::unique_ptr<Subprocess> process;
  uint16_t port = 0;
  std::string body;  // a valid inference request
};

Served StartServe(const std::string& config, std::vector<std::string> extra = {}) {
  Served s;
  std::vector<std::string> argv = {kBin, "serve",      config, "--port",
                                   "0",  "--duration", "60",   "--json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  s.process = std::make_unique<Subprocess>(argv);
  EXPECT_TRUE(s.process->WaitForStderr("sloserve: ready", std::chrono::seconds(30)))
      << s.process->err();
  s.port = testing::ListenPort(s.process->err());
  // The input's name from the model's metadata (the profile's, shape declared -1,16).
  const auto meta =
      nlohmann::json::parse(testing::HttpGetBody(s.port, "/v2/models/image"), nullptr, false);
  EXPECT_FALSE(meta.is_discarded());
  s.body = InferBody();
  if (!meta.is_discarded() && meta.contains("inputs")) {
    auto doc = nlohmann::json::parse(s.body);
    doc["inputs"][0]["name"] = meta["inputs"][0]["name"];
    s.body = doc.dump();
  }
  return s;
}

double SaturatedThroughput(const std::string& config) {
  auto r = RunProcess({kBin, "sim", config, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  return j["rows"][0]["throughput_qps"].get<double>();
}

TEST(OverloadE2eTest, TwiceCapacityShedsWithRetryAfterAndAdmittedMeetTheSlo) {
  testing::ScopedTempDir dir("sloserve-overload");
  const std::string config = WriteConfig(dir);
  const double capacity = SaturatedThroughput(config);  // sim at 5000 qps: saturated
  ASSERT_GT(capacity, 5);
  Served s = StartServe(config);
  ASSERT_GT(s.port, 0);

  // While loadgen holds the server at 2x capacity, our own requests must see some 429s,
  // each with Retry-After.
  std::atomic<int> refused{0}, refused_with_retry{0};
  std::thread probe([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    for (int i = 0; i < 60; ++i) {
      bool sent = false;
      const std::string response = PostInfer(s.port, s.body, &sent);
      if (response.rfind("HTTP/1.0 429", 0) == 0 || response.rfind("HTTP/1.1 429", 0) == 0) {
        ++refused;
        if (response.find("\r\nRetry-After: ") != std::string::npos) ++refused_with_retry;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  auto load = RunProcess({kBin, "loadgen", "--port", std::to_string(s.port), "--qps",
                          std::to_string(2 * capacity), "--duration", "3", "--slo-ms", "150",
                          "--timeout", "20", "--json"});
  probe.join();
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const auto l = nlohmann::json::parse(load.out);
  s.process->Signal(SIGTERM);
  auto done = s.process->Wait();
  ASSERT_EQ(done.exit_code, 0) << done.err;
  const auto m = nlohmann::json::parse(done.out);

  EXPECT_GT(refused.load(), 0);
  EXPECT_EQ(refused_with_retry.load(), refused.load());
  EXPECT_GT(l["errors_by_status"].value("429", 0), 0) << l.dump();
  EXPECT_EQ(l["transport_errors"], 0) << l.dump();
  EXPECT_EQ(l["timeouts"], 0) << l.dump();
  EXPECT_GT(m["shed"].get<int64_t>(), 0) << m.dump();
  EXPECT_GT(m["met"].get<int64_t>(), 0) << m.dump();
  // Wide margins: the server's p99 of answered requests within the SLO (+ 50%), and most
  // admitted requests on time (sim says ~90%; a shared CI machine adds jitter).
  EXPECT_LE(m["p99_ms"].get<double>(), 1.5 * 150) << m.dump();
  EXPECT_GE(m["admitted_met_rate"].get<double>(), 0.6) << m.dump();
}

// Issue 37: a request of more rows than any variant's largest profiled batch was shed
// by admission on an idle server (429 + Retry-After: 1) however often it came, though it
// could never run. It is answered 400 naming the limit (32 rows in ramsis-image on
// n1-4cpu), every time; a request within it is still served.
TEST(OverloadE2eTest, RequestsLargerThanAnyBatchAre400NamingTheLimit) {
  Subprocess server({kBin, "serve", "--port", "0", "--duration", "120", "--set", "workers=2",
                     "--set", "server.input_shape=-1,16"});
  ASSERT_TRUE(server.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << server.err();
  const uint16_t port = testing::ListenPort(server.err());
  ASSERT_NE(port, 0) << server.err();
  auto body = [](int rows) {
    std::string data;
    for (int i = 0; i < rows * 16; ++i) data += i ? ",0.5" : "0.5";
    return R"({"inputs":[{"name":"input","shape":[)" + std::to_string(rows) +
           R"(,16],"datatype":"FP32","data":[)" + data + "]}]}";
  };
  for (int rows : {256, 256, 33, 1000}) {
    const std::string r =
        testing::HttpExchange(port, testing::HttpPostRequest("/v2/models/image/infer", body(rows)));
    EXPECT_EQ(r.substr(0, r.find("\r\n")), "HTTP/1.0 400 Bad Request") << rows << ": " << r;
    EXPECT_EQ(r.find("Retry-After"), std::string::npos) << r;
    // The limit within the default 150 ms SLO (issue 35's max_batch_size), before admission.
    EXPECT_NE(r.find("model 'image' serves at most 9 rows per request within a 150 ms SLO"),
              std::string::npos)
        << r;
    EXPECT_NE(r.find("got " + std::to_string(rows)), std::string::npos) << r;
  }
  const std::string ok =
      testing::HttpExchange(port, testing::HttpPostRequest("/v2/models/image/infer", body(1)));
  EXPECT_EQ(ok.substr(0, ok.find("\r\n")), "HTTP/1.0 200 OK") << ok;
}

TEST(OverloadE2eTest, SigtermUnderLoadAnswersEveryRequestItRead) {
  testing::ScopedTempDir dir("sloserve-overload");
  Served s = StartServe(WriteConfig(dir));
  ASSERT_GT(s.port, 0);
  // Clients that keep sending one request per connection until the server is gone: every
  // request written completely gets an HTTP response (200, 429, 503, ...), never a bare
  // close, while the server drains.
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0}, unanswered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 6; ++c) {
    clients.emplace_back([&] {
      while (!stop.load()) {
        bool sent = false;
        const std::string response = PostInfer(s.port, s.body, &sent);
        if (!sent) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));  // refused: stopped
          continue;
        }
        if (response.rfind("HTTP/1.", 0) == 0) {
          ++answered;
        } else {
          ++unanswered;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  s.process->Signal(SIGTERM);
  auto done = s.process->Wait();
  stop.store(true);
  for (auto& t : clients) t.join();
  EXPECT_EQ(done.exit_code, 0) << done.err;
  EXPECT_GT(answered.load(), 0);
  EXPECT_EQ(unanswered.load(), 0) << answered.load() << " answered";
}

// Issue 37 item 5: a request still arriving at SIGTERM (its header and half its body
// sent) is answered 503 "server is shutting down" with Connection: close at the drain
// point (docs/serve.md "Shutdown", 2 s), and serve then exits. The drain and read limits
// are an hour here: before the fix the pending read was only ended by the drain limit
// (ioc.stop(), no response), so serve would hold the connection, and its exit, for the
// hour; the watchdog (a minute, 30x the documented 2 s) turns that into a failure.
TEST(OverloadE2eTest, HalfReadRequestAtSigtermGets503AndServeExits) {
  testing::ScopedTempDir dir("sloserve-halfread");
  Served s = StartServe(WriteConfig(dir),
                        {"--set", "server.drain_s=3600", "--set", "server.body_timeout_s=3600",
                         "--set", "server.header_timeout_s=3600"});
  ASSERT_GT(s.port, 0);
  const int fd = testing::ConnectLoopback(s.port);  // its reads time out after 10 s
  ASSERT_GE(fd, 0);
  const std::string request = testing::HttpPostRequest("/v2/models/image/infer", s.body);
  const std::string half = request.substr(0, request.find("\r\n\r\n") + 4 + s.body.size() / 2);
  ASSERT_EQ(send(fd, half.data(), half.size(), MSG_NOSIGNAL), static_cast<ssize_t>(half.size()));
  // The server has the header (its body is being read) before the signal.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  s.process->Signal(SIGTERM);
  std::atomic<bool> exited{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 600 && !exited.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!exited.load()) s.process->Signal(SIGKILL);
  });
  std::string response;
  char buf[4096];
  for (int waited = 0; waited < 6;) {  // up to a minute of 10 s read timeouts
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      response.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      ++waited;
    } else {
      break;  // the server closed after its answer
    }
  }
  close(fd);
  const auto done = s.process->Wait();
  exited.store(true);
  watchdog.join();
  EXPECT_EQ(response.substr(0, response.find("\r\n")), "HTTP/1.0 503 Service Unavailable")
      << response;
  EXPECT_NE(response.find("server is shutting down"), std::string::npos) << response;
  EXPECT_NE(response.find("Retry-After: 1\r\n"), std::string::npos) << response;
  EXPECT_EQ(done.exit_code, 0) << "killed by the watchdog? " << done.err;
}

// 1,000 distinct 64 KB app names (issue 16 item 2): every request is served, they share
// the one "unprofiled" app (no /metrics label per name), and the server's memory does not
// grow with the names (keeping them would take 64 MB). The RSS bound is
// measured only without sanitizers (ASan's quarantine keeps freed memory resident), so
// the test is skipped there (~10 s of requests).
TEST(OverloadE2eTest, ThousandDistinctAppNamesKeepMemoryBounded) {
  if (SLOSERVE_TEST_SANITIZED) GTEST_SKIP() << "RSS is not meaningful under sanitizers";
  testing::ScopedTempDir dir("sloserve-apps");
  Served s = StartServe(WriteConfig(dir), {"--set", "executor.time_scale=0"});
  ASSERT_GT(s.port, 0);
  auto doc = nlohmann::json::parse(s.body);
  auto request = [&](int i) {
    std::string app = std::to_string(i) + "-";
    app.resize(64 * 1024, 'a' + static_cast<char>(i % 26));
    doc["parameters"]["app"] = app;
    bool sent = false;
    return PostInfer(s.port, doc.dump(), &sent);
  };
  for (int i = 0; i < 50; ++i) request(i);  // warm up the allocator
  const long before = testing::RssKiB(s.process->pid());
  int ok = 0;
  for (int i = 50; i < 1050; ++i) ok += request(i).rfind("HTTP/1.0 200", 0) == 0 ? 1 : 0;
  const long after = testing::RssKiB(s.process->pid());
  EXPECT_EQ(ok, 1000);
  const std::string metrics = testing::HttpGetBody(s.port, "/metrics");
  EXPECT_EQ(metrics.find("aaaaaaaaaaaaaaaa"), std::string::npos);
  EXPECT_LT(metrics.size(), size_t{256} << 10);
  std::printf("RSS before %ld KiB, after 1,000 distinct 64 KB app names %ld KiB\n", before, after);
  EXPECT_LT(after - before, 16 * 1024) << "RSS grew from " << before << " to " << after << " KiB";
  s.process->Signal(SIGTERM);
  s.process->Wait();
}

// The request of `body` in chunks of 64 KiB (HTTP/1.1, Connection: close).
std::string ChunkedPostRequest(const std::string& body) {
  std::string request =
      "POST /v2/models/image/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
      "application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
  constexpr size_t kChunk = 64 * 1024;
  char size[24];
  for (size_t at = 0; at < body.size(); at += kChunk) {
    const size_t n = std::min(kChunk, body.size() - at);
    std::snprintf(size, sizeof size, "%zx\r\n", n);
    (request += size).append(body, at, n) += "\r\n";
  }
  return request + "0\r\n\r\n";
}

// A burst of large bodies (issue 16 item 2, "memory returned after a large request"):
// 8 requests of 8 MiB each (1.6M JSON values, parsed into a tree and a tensor), 4 at a
// time, then the server's RSS is back within 12 MiB of where it was. Before the mmap
// threshold was fixed (server/heap_release.h) this burst left it 24 MiB higher
// (experiments/limits/burst_rss.py). The same with chunked bodies (issue 37 item 2): they
// grew by reallocation and left 94-119 MiB behind after 32 uploads of 16 MiB; a chunked
// body reserves its string as it is charged now (11 MiB behind, measured; the bound is one
// max_body, 16 MiB: a chunked body's string is reserved at max_body, not at its size).
// Not under sanitizers (ASan keeps freed memory).
void BurstOfLargeBodiesReturnsMemory(bool chunked) {
  if (SLOSERVE_TEST_SANITIZED) GTEST_SKIP() << "RSS is not meaningful under sanitizers";
  testing::ScopedTempDir dir("sloserve-burst");
  Served s = StartServe(WriteConfig(dir), {"--set", "executor.time_scale=0"});
  ASSERT_GT(s.port, 0);
  for (int i = 0; i < 50; ++i) {  // warm up the allocator and the io threads
    bool sent = false;
    PostInfer(s.port, s.body, &sent);
  }
  const long before = testing::RssKiB(s.process->pid());
  // Rows of 16 values "0.25" (80 bytes a row): about 8 MiB.
  const int rows = (8 << 20) / 80;
  std::string row = "[0.25";
  for (int i = 1; i < 16; ++i) row += ",0.25";
  row += "]";
  auto doc = nlohmann::json::parse(s.body);
  doc["inputs"][0]["shape"] = {rows, 16};
  doc["inputs"][0]["data"] = nlohmann::json::array();
  std::string big = doc.dump();
  std::string data;
  data.reserve(static_cast<size_t>(rows) * (row.size() + 1));
  for (int i = 0; i < rows; ++i) (data += i > 0 ? "," : "") += row;
  big.insert(big.find("\"data\":[") + 8, data);
  const std::string request =
      chunked ? ChunkedPostRequest(big) : testing::HttpPostRequest("/v2/models/image/infer", big);
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 2; ++i) {
        bool sent = false;
        if (testing::HttpExchange(s.port, request, &sent).rfind("HTTP/1.", 0) == 0)
          answered.fetch_add(1);
      }
    });
  }
  for (auto& t : clients) t.join();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const long after = testing::RssKiB(s.process->pid());
  EXPECT_EQ(answered.load(), 8);
  std::printf("RSS before %ld KiB, after 8 %s bodies of %.1f MiB %ld KiB\n", before,
              chunked ? "chunked" : "Content-Length", static_cast<double>(big.size()) / (1 << 20),
              after);
  EXPECT_LT(after - before, (chunked ? 16 : 12) * 1024)
      << "RSS grew from " << before << " to " << after << " KiB";
  s.process->Signal(SIGTERM);
  s.process->Wait();
}

TEST(OverloadE2eTest, BurstOfLargeBodiesReturnsMemory) {
  BurstOfLargeBodiesReturnsMemory(false);
}

TEST(OverloadE2eTest, BurstOfLargeChunkedBodiesReturnsMemory) {
  BurstOfLargeBodiesReturnsMemory(true);
}

// A connected socket to the server, or -1.
int ConnectTo(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// How many of `n` inference requests, each on a new connection, were answered 200.
int ServedOf(const Served& s, int n) {
  int served = 0;
  for (int i = 0; i < n; ++i) {
    bool sent = false;
    const std::string response = PostInfer(s.port, s.body, &sent);
    served += response.rfind("HTTP/1.0 200", 0) == 0 || response.rfind("HTTP/1.1 200", 0) == 0;
  }
  return served;
}

// Raises this process's open-file limit towards `wanted` (within the hard limit); the
// limit it then has.
rlim_t RaiseOpenFileLimit(rlim_t wanted) {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return 0;
  if (files.rlim_cur < wanted) {
    files.rlim_cur = std::min(wanted, files.rlim_max);
    if (setrlimit(RLIMIT_NOFILE, &files) != 0 || getrlimit(RLIMIT_NOFILE, &files) != 0) return 0;
  }
  return files.rlim_cur;
}

// Fairness above server.max_connections (issue 16): 10,200 connections that never send a
// whole request (idle, or an unfinished header) are held against the default cap of
// 10,000, with read deadlines too long to help. Every request of a normal client, each
// on a new connection, is served, and the server's connections stay within the cap
// (serve.md "Slow clients"). Release only: 10k sockets are slow under a sanitizer.
TEST(OverloadE2eTest, TenThousandHeldConnectionsDoNotKeepANormalClientOut) {
  if (SLOSERVE_TEST_SANITIZED) GTEST_SKIP() << "10,000 sockets: Release only";
  constexpr int kHeld = 10'200, kCap = 10'000;
  // One descriptor per held connection here; serve (spawned after) inherits the limit.
  const rlim_t limit = RaiseOpenFileLimit(kHeld + 400);
  if (limit < kHeld + 400) GTEST_SKIP() << "open-file limit " << limit;
  testing::ScopedTempDir dir("sloserve-overload");
  Served s = StartServe(WriteConfig(dir), {"--set", "server.header_timeout_s=120", "--set",
                                           "server.idle_timeout_s=120"});
  ASSERT_GT(s.port, 0);
  std::vector<int> held;
  for (int i = 0; i < kHeld; ++i) {
    const int fd = ConnectTo(s.port);
    ASSERT_GE(fd, 0) << "connection " << i;
    held.push_back(fd);
    if (i % 2 == 1) {
      const std::string head = "POST /v2/models/image/infer HTTP/1.1\r\nHost: x\r\n";
      ASSERT_EQ(send(fd, head.data(), head.size(), MSG_NOSIGNAL),
                static_cast<ssize_t>(head.size()));
    }
  }
  constexpr int kRequests = 20;
  EXPECT_EQ(ServedOf(s, kRequests), kRequests);
  std::string text;  // of the last scrape
  auto metric = [&](const std::string& name) {
    text = testing::HttpGetBody(s.port, "/metrics");
    const size_t at = text.find("\n" + name + " ");
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size() + 2));
  };
  EXPECT_GE(metric("sloserve_http_connections_evicted_total"), kHeld - kCap) << text;
  double open = metric("sloserve_http_connections_open");
  for (int i = 0; i < 200 && open > kCap; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    open = metric("sloserve_http_connections_open");
  }
  EXPECT_LE(open, kCap);
  for (int fd : held) close(fd);
  s.process->Signal(SIGTERM);
  EXPECT_EQ(s.process->Wait().exit_code, 0);
}

// Issue 37 (C), at full scale: 10,200 connections that each made one request (GET
// /v2/health/live, answered) and then stay idle between keep-alive requests. Only
// connections that had never delivered a request were evicted, so these kept every new
// client out (503 "too many open connections"). Now the longest-idle ones make room.
TEST(OverloadE2eTest, TenThousandIdleKeepAliveHoldersDoNotKeepANormalClientOut) {
  if (SLOSERVE_TEST_SANITIZED) GTEST_SKIP() << "10,000 sockets: Release only";
  constexpr int kHeld = 10'200, kCap = 10'000;
  // One descriptor per held connection here; serve (spawned after) inherits the limit.
  const rlim_t limit = RaiseOpenFileLimit(kHeld + 400);
  if (limit < kHeld + 400) GTEST_SKIP() << "open-file limit " << limit;
  testing::ScopedTempDir dir("sloserve-overload");
  Served s = StartServe(WriteConfig(dir), {"--set", "server.idle_timeout_s=120"});
  ASSERT_GT(s.port, 0);
  std::vector<int> held;
  const std::string get = "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n";
  int answered = 0;
  for (int i = 0; i < kHeld; ++i) {
    const int fd = ConnectTo(s.port);
    ASSERT_GE(fd, 0) << "connection " << i;
    held.push_back(fd);
    ASSERT_EQ(send(fd, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
    // Its whole answer (a small JSON object), so it is idle, not mid-request.
    std::string response;
    char buf[1024];
    while (response.empty() || response.back() != '}') {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      response.append(buf, static_cast<size_t>(n));
    }
    answered += response.rfind("HTTP/1.1 200", 0) == 0;
  }
  // Past the cap the earliest holders made room for the later ones.
  EXPECT_EQ(answered, kHeld);
  constexpr int kRequests = 20;
  EXPECT_EQ(ServedOf(s, kRequests), kRequests);
  std::string text;
  auto metric = [&](const std::string& name) {
    text = testing::HttpGetBody(s.port, "/metrics");
    const size_t at = text.find("\n" + name + " ");
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size() + 2));
  };
  // 200 holders for the later ones, then one for the first normal request (each
  // HTTP/1.0 request closes after its answer, freeing its place for the next).
  EXPECT_GE(metric("sloserve_http_connections_evicted_total"), kHeld - kCap + 1) << text;
  EXPECT_LE(metric("sloserve_http_connections_open"), kCap);
  for (int fd : held) close(fd);
  s.process->Signal(SIGTERM);
  EXPECT_EQ(s.process->Wait().exit_code, 0);
}

TEST(OverloadE2eTest, QueuedRequestsOfDisconnectedClientsAreCancelled) {
  testing::ScopedTempDir dir("sloserve-overload");
  // Admission off, so the burst below is queued rather than mostly shed (cancellation
  // does not depend on it).
  Served s = StartServe(WriteConfig(dir), {"--set", "engine.admission=off"});
  ASSERT_GT(s.port, 0);
  // 2 workers: beyond the first batches, requests wait in the queues when their clients
  // hang up; the server notices the closed sockets and drops those instead of running them.
  int sent = 0;
  for (int i = 0; i < 40; ++i) sent += SendAndHangUp(s.port, s.body) ? 1 : 0;
  ASSERT_GT(sent, 30);
  double cancelled = 0;
  for (int i = 0; i < 100 && cancelled == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::string metrics = testing::HttpGetBody(s.port, "/metrics");
    const std::string key = "\nsloserve_queries_cancelled_total ";
    const size_t at = metrics.find(key);
    if (at != std::string::npos) cancelled = std::atof(metrics.c_str() + at + key.size());
  }
  EXPECT_GT(cancelled, 0);
  s.process->Signal(SIGTERM);
  auto done = s.process->Wait();
  ASSERT_EQ(done.exit_code, 0) << done.err;
  const auto m = nlohmann::json::parse(done.out);
  EXPECT_GT(m["cancelled"].get<int64_t>(), 0) << m.dump();
  EXPECT_EQ(m["arrived"].get<int64_t>(),
            m["completed"].get<int64_t>() + m["dropped"].get<int64_t>());
}

}  // namespace
}  // namespace sloserve

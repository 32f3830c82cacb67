// The TCP Run channel end to end (docs/remote-workers.md, "The TCP Run channel"): `sloserve
// serve --set server.worker_run_transport=tcp` with two `sloserve worker --run-port 0`
// processes on 127.0.0.1. Requests over gRPC and HTTP are served with the Runs on the
// channel (the workers count them); a killed worker's Runs end once and the survivor takes
// the load; every arrival ends once; serve stops cleanly. A TCP channel refuses TLS, and a
// run port out of range is refused, each naming the problem.
#include <signal.h>

#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grpc/grpc_test_util.h"
#include "grpc/remote_worker_test_util.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

using remote_test::PhasedClient;
using remote_test::TwoWorkerServe;
using remote_test::WriteConfig;
using testing::kBin;
using testing::Subprocess;

// "stopped after N actions (M Runs on the TCP Run channel)" -> M (-1 if absent).
int64_t TcpRunsOf(const std::string& worker_log) {
  std::smatch m;
  static const std::regex re(R"(\((\d+) Runs on the TCP Run channel\))");
  return std::regex_search(worker_log, m, re) ? std::stoll(m[1].str()) : -1;
}

TEST(TcpRunChannelE2E, RunsOnTheChannelAreServedAndAKilledWorkerLeavesTheLoadToTheOther) {
  testing::ScopedTempDir dir("tcp-run-channel");
  TwoWorkerServe two;
  two.tcp_runs = true;
  ASSERT_NO_FATAL_FAILURE(two.Start(WriteConfig(dir)));
  EXPECT_TRUE(two.w0->WaitForStderr("TCP Run channel on 127.0.0.1:", std::chrono::seconds(5)))
      << two.w0->err();

  // 80 requests over gRPC at 40 req/s, then 1 s of HTTP at 40 req/s.
  PhasedClient client(two.stub.get(), two.request);
  for (int i = 0; i < 80; ++i) client.SendPaced(0, std::chrono::milliseconds(25));
  ASSERT_TRUE(client.WaitAll(std::chrono::seconds(30)));
  const std::vector<PhasedClient::Outcome> before = client.Of(0);
  int served = 0;
  for (const auto& o : before) served += o.ok ? 1 : 0;
  EXPECT_EQ(served, 80) << PhasedClient::Summary(before);
  auto http = testing::RunProcess({kBin, "loadgen", "--port", std::to_string(two.http_port),
                                   "--model", "image", "--qps", "40", "--duration", "1", "--json"});
  ASSERT_EQ(http.exit_code, 0) << http.err;
  const auto report = nlohmann::json::parse(http.out);
  const int http_sent = report["sent"].get<int>();
  EXPECT_EQ(report["ok"], http_sent) << http.out;

  // w1 killed: its Runs in flight fail once (re-queued or dropped), w0 serves the rest.
  two.w1->Signal(SIGKILL);
  two.w1->Wait();
  for (int i = 0; i < 80; ++i) client.SendPaced(1, std::chrono::milliseconds(25));
  ASSERT_TRUE(client.WaitAll(std::chrono::seconds(30)));
  EXPECT_EQ(client.duplicate(), 0);
  const std::vector<PhasedClient::Outcome> after = client.Of(1);
  int by_w0 = 0, by_w1 = 0;
  for (const auto& o : after) {
    by_w0 += o.ok && o.worker == "w0" ? 1 : 0;
    by_w1 += o.ok && o.worker == "w1" ? 1 : 0;
  }
  EXPECT_EQ(by_w1, 0) << PhasedClient::Summary(after);
  EXPECT_GE(3 * by_w0, 2 * static_cast<int>(after.size())) << PhasedClient::Summary(after);
  remote_test::ExpectServedOrClearError(after);
  remote_test::ExpectEveryArrivalEnded(two.http_port, 160 + http_sent);

  two.serve->Signal(SIGTERM);
  EXPECT_EQ(two.serve->Wait().exit_code, 0) << two.serve->err();
  two.w0->Signal(SIGTERM);
  EXPECT_EQ(two.w0->Wait().exit_code, 0);
  // Every Run w0 served came on its channel: it served more than the requests it answered
  // after the kill (each a Run of one query at this rate, or fewer Runs of several).
  const int64_t tcp_runs = TcpRunsOf(two.w0->err());
  EXPECT_GT(tcp_runs, 0) << two.w0->err();
}

TEST(TcpRunChannelE2E, PlaintextChannelAndTlsAreRefusedTogether) {
  testing::ScopedTempDir dir("tcp-run-channel-refusals");
  const std::string config = WriteConfig(dir);
  Subprocess serve({kBin, "serve", config, "--port", "0", "--remote-worker", "127.0.0.1:1", "--set",
                    "server.worker_run_transport=tcp", "--set",
                    "server.worker_tls_ca_file=" + dir.File("ca.pem")});
  EXPECT_NE(serve.Wait().exit_code, 0);
  EXPECT_NE(serve.err().find("server.worker_run_transport=tcp: the TCP Run channel is plaintext"),
            std::string::npos)
      << serve.err();

  Subprocess bad_choice({kBin, "serve", config, "--port", "0", "--remote-worker", "127.0.0.1:1",
                         "--set", "server.worker_run_transport=udp"});
  EXPECT_NE(bad_choice.Wait().exit_code, 0);
  EXPECT_NE(bad_choice.err().find("server.worker_run_transport"), std::string::npos)
      << bad_choice.err();

  auto out_of_range = testing::RunProcess(
      {kBin, "worker", config, "--listen", "127.0.0.1:0", "--run-port", "65536"});
  EXPECT_NE(out_of_range.exit_code, 0);
  EXPECT_NE(out_of_range.err.find("--run-port"), std::string::npos) << out_of_range.err;

  auto with_tls =
      testing::RunProcess({kBin, "worker", config, "--listen", "127.0.0.1:0", "--run-port", "0",
                           "--tls-cert", dir.File("c.pem"), "--tls-key", dir.File("k.pem")});
  EXPECT_NE(with_tls.exit_code, 0);
  EXPECT_NE(with_tls.err.find("plaintext"), std::string::npos) << with_tls.err;
}

}  // namespace
}  // namespace sloserve

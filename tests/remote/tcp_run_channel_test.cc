// The TCP Run channel (docs/remote-workers.md, "The TCP Run channel") between a real
// RemoteExecutor and a WorkerServer in the test's process (tests/remote/in_process_worker.h):
// Runs go on it when the worker offers one and the controller is set to use it, each gets
// exactly its own reply whatever the worker does (reorders, loses, stops), and a worker
// without one is served on its gRPC Run stream as before.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "remote/in_process_worker.h"
#include "sloserve/proto/worker_service.pb.h"
#include "sloserve/remote/framed_connection.h"

namespace sloserve::remote_test {
namespace {

constexpr int kAnyPort = 0;

class TcpRunChannelTest : public ::testing::Test {
 protected:
  const ProfileSuite suite_ = testing::SmallSuite();
};

// Run 1 sent and answered by the worker's first action: served with its own reply.
void RunOneAndServeIt(Controller& controller, InProcessWorker& worker) {
  controller.Run(1);
  ASSERT_TRUE(worker.puppet().WaitSent(1));
  worker.puppet().Answer(0);
  ASSERT_TRUE(controller.sink.WaitResults(1));
  ExpectServed(controller.sink, 1);
}

TEST_F(TcpRunChannelTest, RunsGoOnTheChannelAndEachGetsItsOwnReply) {
  InProcessWorker worker(&suite_, 0, false, kAnyPort);
  Controller controller(&suite_, worker.address(), Seconds(10), size_t{1} << 20,
                        /*tcp_runs=*/true);
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  ASSERT_TRUE(controller.WaitTcpReady());
  for (ActionId id = 1; id <= 3; ++id) controller.Run(id);
  ASSERT_TRUE(worker.puppet().WaitSent(3));
  for (int i = 2; i >= 0; --i) worker.puppet().Answer(static_cast<size_t>(i));  // reordered
  for (ActionId id = 1; id <= 3; ++id) {
    ASSERT_TRUE(controller.sink.WaitResults(id));
    ExpectServed(controller.sink, id);
  }
  EXPECT_EQ(worker.tcp_runs_received(), 3) << "every Run came on the TCP Run channel";
  EXPECT_EQ(controller.Log().find("offers no TCP Run channel"), std::string::npos)
      << controller.Log();
}

TEST_F(TcpRunChannelTest, AWorkerWithoutOneIsServedOnItsRunStream) {
  InProcessWorker worker(&suite_);  // no --run-port
  Controller controller(&suite_, worker.address(), Seconds(10), size_t{1} << 20,
                        /*tcp_runs=*/true);
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  ASSERT_NO_FATAL_FAILURE(RunOneAndServeIt(controller, worker));
  EXPECT_EQ(worker.tcp_runs_received(), 0);
  EXPECT_NE(controller.Log().find("offers no TCP Run channel (start it with --run-port)"),
            std::string::npos)
      << controller.Log();
}

// Not asked to, the controller keeps to the Run stream even when the worker offers a channel.
TEST_F(TcpRunChannelTest, AControllerNotSetToUseItKeepsToTheRunStream) {
  InProcessWorker worker(&suite_, 0, false, kAnyPort);
  Controller controller(&suite_, worker.address(), Seconds(10));
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  ASSERT_NO_FATAL_FAILURE(RunOneAndServeIt(controller, worker));
  EXPECT_EQ(worker.tcp_runs_received(), 0);
}

// The worker never answers: the Run's deadline closes the channel and fails the Run once;
// the worker is marked down, rejoins when its checks pass, and the next Run goes on a new
// channel; the late reply to the first changes nothing.
TEST_F(TcpRunChannelTest, ALostReplyFailsTheRunOnceAtItsDeadline) {
  InProcessWorker worker(&suite_, 0, false, kAnyPort);
  Controller controller(&suite_, worker.address(), Millis(300), size_t{1} << 20,
                        /*tcp_runs=*/true);
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  ASSERT_TRUE(controller.WaitTcpReady());
  controller.Run(1);
  ASSERT_TRUE(worker.puppet().WaitSent(1));
  ASSERT_TRUE(controller.sink.WaitResults(1));
  const std::vector<ActionResult> lost = controller.sink.ResultsFor(1);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].status.code(), StatusCode::kUnavailable) << lost[0].status.ToString();
  EXPECT_NE(lost[0].status.message().find("no reply within its deadline"), std::string::npos)
      << lost[0].status.ToString();
  ASSERT_TRUE(controller.sink.WaitReachable(true)) << "health checks pass: it rejoins";
  ASSERT_TRUE(controller.WaitTcpReady()) << "and a new channel opens";
  controller.Run(2);
  ASSERT_TRUE(worker.puppet().WaitSent(2));
  worker.puppet().Answer(0);  // too late, on a channel that has ended
  worker.puppet().Answer(1);
  ASSERT_TRUE(controller.sink.WaitResults(2));
  ExpectServed(controller.sink, 2);
  EXPECT_EQ(controller.sink.ResultsFor(1).size(), 1u);
  EXPECT_EQ(worker.tcp_runs_received(), 2) << "the second Run went on a new channel";
}

// A worker stopped while it holds a Run answers it (refused: it stopped before the Run
// finished) or its channel ends: either way the Run gets one failed result.
TEST_F(TcpRunChannelTest, AStoppedWorkerFailsItsRunOnce) {
  InProcessWorker worker(&suite_, 0, false, kAnyPort);
  Controller controller(&suite_, worker.address(), Seconds(10), size_t{1} << 20,
                        /*tcp_runs=*/true);
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  ASSERT_TRUE(controller.WaitTcpReady());
  controller.Run(1);
  ASSERT_TRUE(worker.puppet().WaitSent(1));
  worker.Stop();
  ASSERT_TRUE(controller.sink.WaitResults(1));
  const std::vector<ActionResult> failed = controller.sink.ResultsFor(1);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_FALSE(failed[0].status.ok());
  ASSERT_TRUE(controller.sink.WaitReachable(false)) << "the stopped worker is marked down";
}

// With DrainOn (serve's gRPC queue thread reads the workers' replies), a reply on the TCP
// channel is posted quietly on the channel's own thread and followed there by StepOrWake,
// so that thread steps the engine while the driver's is idle; without it, posted plainly.
TEST_F(TcpRunChannelTest, RepliesArePostedQuietlyOnTheChannelsThreadUnderDrainOn) {
  InProcessWorker worker(&suite_, 0, false, kAnyPort);
  Controller controller(&suite_, worker.address(), Seconds(10), size_t{1} << 20,
                        /*tcp_runs=*/true);
  QueueDrainer drainer;
  controller.executor->DrainOn(drainer.cq());
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  ASSERT_TRUE(controller.WaitTcpReady());
  controller.Run(1);
  ASSERT_TRUE(worker.puppet().WaitSent(1));
  worker.puppet().Answer(0);
  ASSERT_TRUE(controller.sink.WaitResults(1));
  ExpectServed(controller.sink, 1);
  EXPECT_EQ(controller.sink.quiet_posts(), 1);
  EXPECT_NE(controller.sink.quiet_thread(), std::this_thread::get_id());
  EXPECT_NE(controller.sink.quiet_thread(), drainer.id()) << "read on the channel's thread";
  ASSERT_TRUE(controller.sink.WaitStepsOrWakes(1));
  EXPECT_EQ(controller.sink.step_thread(), controller.sink.quiet_thread());

  controller.executor->LeaveQueue();
  drainer.Stop();
  controller.Run(2);  // still on the channel, posted plainly now
  ASSERT_TRUE(worker.puppet().WaitSent(2));
  worker.puppet().Answer(1);
  ASSERT_TRUE(controller.sink.WaitResults(2));
  ExpectServed(controller.sink, 2);
  EXPECT_EQ(controller.sink.quiet_posts(), 1) << "posted as before";
  EXPECT_EQ(worker.tcp_runs_received(), 2);
}

// Whatever a stranger sends to the run port (bytes that are no RunRequests, a length past
// the frame limit), the worker closes that connection and goes on serving its controller.
TEST_F(TcpRunChannelTest, GarbageOnTheRunPortClosesThatConnectionOnly) {
  InProcessWorker worker(&suite_, 0, false, kAnyPort);
  Controller controller(&suite_, worker.address(), Seconds(10), size_t{1} << 20,
                        /*tcp_runs=*/true);
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  ASSERT_TRUE(controller.WaitTcpReady());
  const std::string not_a_message = std::string("\x05\x00\x00\x00", 4) + "\xff\xff\xff\xff\xff";
  const std::string too_long = std::string("\xff\xff\xff\x7f", 4) + "abc";
  // A valid Run right behind a bad frame, in the same read: it must not run.
  worker::RunRequests run;
  worker::RunRequest* r = run.add_runs();
  r->set_action(99);
  r->set_rows(1);
  r->set_start_within_us(-1);
  worker::Query* q = r->add_queries();
  q->set_id(99);
  q->set_size(1);
  q->set_slo_us(1'000'000);
  q->set_deadline_in_us(1'000'000);
  const std::string body = run.SerializeAsString();
  std::string framed(4, '\0');
  for (int b = 0; b < 4; ++b) framed[b] = static_cast<char>((body.size() >> (8 * b)) & 0xff);
  const std::string bad_then_good = not_a_message + framed + body;
  for (const std::string& bytes : {not_a_message, too_long, bad_then_good}) {
    auto fd = remote::ConnectTcp("127.0.0.1", worker.run_port(), Seconds(5));
    ASSERT_TRUE(fd.ok()) << fd.status().ToString();
    ASSERT_EQ(send(*fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
    // The worker's greeting may come first; then the connection closes (or resets).
    bool closed = false;
    for (int reads = 0; reads < 100 && !closed; ++reads) {
      pollfd p{*fd, POLLIN, 0};
      ASSERT_EQ(poll(&p, 1, 20'000), 1) << "the worker closes the connection";
      char buf[256];
      closed = recv(*fd, buf, sizeof buf, 0) <= 0;
    }
    EXPECT_TRUE(closed);
    close(*fd);
  }
  EXPECT_EQ(worker.puppet().sent_count(), 0u) << "no Run behind a bad frame ran";
  ASSERT_NO_FATAL_FAILURE(RunOneAndServeIt(controller, worker));
  EXPECT_EQ(worker.tcp_runs_received(), 1);
}

// Every channel slot of the worker taken (here by idle strangers): the controller's
// channel is closed at accept, before the worker's greeting, so no Run goes on it; the
// Runs are served on the Run stream, nothing fails and the worker stays up.
TEST_F(TcpRunChannelTest, AChannelRefusedAtAcceptLosesNoRun) {
  InProcessWorker worker(&suite_, 0, false, kAnyPort);
  std::vector<int> strangers;
  for (int i = 0; i < 64; ++i) {
    auto fd = remote::ConnectTcp("127.0.0.1", worker.run_port(), Seconds(5));
    ASSERT_TRUE(fd.ok()) << fd.status().ToString();
    strangers.push_back(*fd);
  }
  Controller controller(&suite_, worker.address(), Seconds(10), size_t{1} << 20,
                        /*tcp_runs=*/true);
  ASSERT_NO_FATAL_FAILURE(controller.Start());
  for (ActionId id = 1; id <= 20; ++id) {
    controller.Run(id);
    ASSERT_TRUE(worker.puppet().WaitSent(id));
    worker.puppet().Answer(id - 1);
    ASSERT_TRUE(controller.sink.WaitResults(id));
    ExpectServed(controller.sink, id);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // across health rounds
  }
  EXPECT_EQ(worker.tcp_runs_received(), 0);
  EXPECT_TRUE(controller.sink.reachability().empty()) << "never marked down";
  for (int fd : strangers) close(fd);
}

// A run port another socket holds: the worker does not start, and says which port.
TEST_F(TcpRunChannelTest, ARunPortInUseFailsTheStartNamingIt) {
  remote::FramedListener holder;
  auto held = holder.Listen("127.0.0.1", 0, [](int fd) { close(fd); });
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  WorkerServer::Options options;
  options.run_port = *held;
  auto server = WorkerServer::Create(options, &suite_, [](const ProfileSuite&, PayloadStore*) {
    return std::make_unique<PuppetWorkerExecutor>();
  });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto started = (*server)->Start();
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.status().message().find("cannot listen on 127.0.0.1:" + std::to_string(*held)),
            std::string::npos)
      << started.status().ToString();
}

TEST_F(TcpRunChannelTest, AWorkerRefusesARunPortOutOfRangeOrWithTls) {
  auto make = [this](int run_port, bool tls) {
    WorkerServer::Options options;
    options.run_port = run_port;
    if (tls) options.tls = {"cert.pem", "key.pem", ""};
    return WorkerServer::Create(options, &suite_, [](const ProfileSuite&, PayloadStore*) {
      return std::make_unique<PuppetWorkerExecutor>();
    });
  };
  auto out_of_range = make(65536, false);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("0..65535"), std::string::npos)
      << out_of_range.status().ToString();
  WorkerServer::Options same;
  same.listen = "127.0.0.1:9001";
  same.run_port = 9001;
  auto same_port = WorkerServer::Create(same, &suite_, [](const ProfileSuite&, PayloadStore*) {
    return std::make_unique<PuppetWorkerExecutor>();
  });
  ASSERT_FALSE(same_port.ok());
  EXPECT_NE(same_port.status().message().find("is --listen's port too"), std::string::npos)
      << same_port.status().ToString();
  auto with_tls = make(0, true);
  ASSERT_FALSE(with_tls.ok());
  EXPECT_NE(with_tls.status().message().find("plaintext"), std::string::npos)
      << with_tls.status().ToString();
}

}  // namespace
}  // namespace sloserve::remote_test

// remote::FramedConnection on real loopback TCP sockets: frames cross both ways whole and
// in order (one far larger than the socket's buffers included), and each way a connection
// ends reaches on_end once with why: the peer's close, a frame over the limit, a peer that
// stops reading, Close.
#include "sloserve/remote/framed_connection.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/proto/worker_service.pb.h"

namespace sloserve::remote {
namespace {

constexpr auto kWait = std::chrono::seconds(20);

// One end: the frames it received (as RunRequests' session strings) and how it ended.
struct End {
  Mutex mu;
  CondVar cv;
  std::vector<std::string> frames GUARDED_BY(mu);
  std::vector<Status> ends GUARDED_BY(mu);
  std::unique_ptr<FramedConnection> conn;

  void Open(int fd, size_t max_frame, size_t max_queued) {
    conn = std::make_unique<FramedConnection>(
        fd, max_frame, max_queued,
        FramedConnection::Handlers{[this](std::string_view f) {
                                     worker::RunRequests m;
                                     EXPECT_TRUE(
                                         m.ParseFromArray(f.data(), static_cast<int>(f.size())));
                                     MutexLock lock(mu);
                                     frames.push_back(m.runs_size() > 0 ? m.runs(0).session() : "");
                                     cv.NotifyAll();
                                   },
                                   [this](const Status& why) {
                                     MutexLock lock(mu);
                                     ends.push_back(why);
                                     cv.NotifyAll();
                                   }});
    conn->Start();
  }
  bool WaitFrames(size_t n) EXCLUDES(mu) {
    MutexLock lock(mu);
    return cv.WaitFor(mu, kWait, [&]() REQUIRES(mu) { return frames.size() >= n; });
  }
  // The one end's status; fails the test when none came within kWait.
  Status WaitEnd() EXCLUDES(mu) {
    MutexLock lock(mu);
    EXPECT_TRUE(cv.WaitFor(mu, kWait, [&]() REQUIRES(mu) { return !ends.empty(); }));
    EXPECT_LE(ends.size(), 1u);
    return ends.empty() ? OkStatus() : ends.front();
  }
};

worker::RunRequests Message(const std::string& session) {
  worker::RunRequests m;
  m.add_runs()->set_session(session);
  return m;
}

// A listener's accepted socket and a connected one.
struct Pair {
  int accepted = -1;
  int connected = -1;
};
Pair Connect() {
  FramedListener listener;
  Mutex mu;
  CondVar cv;
  int accepted = -1;
  auto port = listener.Listen("127.0.0.1", 0, [&](int fd) {
    MutexLock lock(mu);
    accepted = fd;
    cv.NotifyAll();
  });
  EXPECT_TRUE(port.ok()) << port.status().ToString();
  auto fd = ConnectTcp("127.0.0.1", *port, Seconds(5));
  EXPECT_TRUE(fd.ok()) << fd.status().ToString();
  MutexLock lock(mu);
  EXPECT_TRUE(cv.WaitFor(mu, kWait, [&]() REQUIRES(mu) { return accepted >= 0; }));
  return {accepted, *fd};
}

TEST(FramedConnectionTest, FramesCrossBothWaysWholeAndInOrder) {
  const Pair p = Connect();
  End a, b;
  a.Open(p.connected, 64 << 20, 256 << 20);
  b.Open(p.accepted, 64 << 20, 256 << 20);
  const std::string big(8 << 20, 'x');  // far beyond the socket buffers: queued, then flushed
  ASSERT_TRUE(a.conn->Send(Message("one")));
  ASSERT_TRUE(a.conn->Send(Message(big)));
  ASSERT_TRUE(a.conn->Send(Message("three")));
  ASSERT_TRUE(b.conn->Send(Message("back")));
  ASSERT_TRUE(b.WaitFrames(3));
  ASSERT_TRUE(a.WaitFrames(1));
  MutexLock lb(b.mu);
  EXPECT_EQ(b.frames[0], "one");
  EXPECT_EQ(b.frames[1], big);
  EXPECT_EQ(b.frames[2], "three");
  MutexLock la(a.mu);
  EXPECT_EQ(a.frames[0], "back");
}

TEST(FramedConnectionTest, ThePeersCloseEndsTheConnectionOnce) {
  const Pair p = Connect();
  End a, b;
  a.Open(p.connected, 1 << 20, 4 << 20);
  b.Open(p.accepted, 1 << 20, 4 << 20);
  b.conn.reset();  // closes its socket
  const Status why = a.WaitEnd();
  EXPECT_EQ(why.code(), StatusCode::kUnavailable);
  EXPECT_NE(why.message().find("closed"), std::string::npos) << why.ToString();
  EXPECT_FALSE(a.conn->Send(Message("after")));
}

TEST(FramedConnectionTest, AFrameOverTheLimitEndsIt) {
  const Pair p = Connect();
  End small, large;
  small.Open(p.accepted, 1024, 1 << 20);
  large.Open(p.connected, 1 << 20, 4 << 20);
  ASSERT_TRUE(large.conn->Send(Message(std::string(4096, 'y'))));
  const Status why = small.WaitEnd();
  EXPECT_NE(why.message().find("over the 1024-byte limit"), std::string::npos) << why.ToString();
  // Its own sends are held to the same limit.
  const Pair q = Connect();
  End sender, receiver;
  sender.Open(q.connected, 1024, 1 << 20);
  receiver.Open(q.accepted, 1 << 20, 1 << 20);
  EXPECT_FALSE(sender.conn->Send(Message(std::string(4096, 'z'))));
  EXPECT_NE(sender.WaitEnd().message().find("frame limit"), std::string::npos);
}

// Resident memory of this process, bytes.
size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// A header claiming a 60 MiB frame, and nothing after it: the receiving end holds what
// came (a few bytes), not what was claimed; it held 64 MiB per connection before.
TEST(FramedConnectionTest, AClaimedLengthIsNotHeldBeforeItsBytesCome) {
  std::vector<Pair> pairs;
  std::vector<std::unique_ptr<End>> ends;
  const size_t before = ResidentBytes();
  for (int i = 0; i < 8; ++i) {
    pairs.push_back(Connect());
    ends.push_back(std::make_unique<End>());
    ends.back()->Open(pairs.back().accepted, 64 << 20, 64 << 20);
    const uint32_t claimed = 60u << 20;
    char header[4];
    for (int b = 0; b < 4; ++b) header[b] = static_cast<char>((claimed >> (8 * b)) & 0xff);
    ASSERT_EQ(send(pairs.back().connected, header, 4, MSG_NOSIGNAL), 4);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // read by the 8 threads
  const size_t grown = ResidentBytes() - std::min(before, ResidentBytes());
  EXPECT_LT(grown, size_t{64} << 20)
      << "8 claims of 60 MiB made it hold " << (grown >> 20) << " MiB";
  for (const Pair& p : pairs) close(p.connected);
  for (auto& e : ends) EXPECT_FALSE(e->WaitEnd().ok());
}

TEST(FramedConnectionTest, APeerThatStopsReadingEndsItPastTheQueueBound) {
  const Pair p = Connect();  // the accepted socket is never read
  End a;
  a.Open(p.connected, 1 << 20, 2 << 20);
  const worker::RunRequests chunk = Message(std::string(512 << 10, 'q'));
  bool refused = false;
  for (int i = 0; i < 4096 && !refused; ++i) refused = !a.conn->Send(chunk);
  EXPECT_TRUE(refused) << "the socket buffers and the 2 MiB queue filled";
  EXPECT_NE(a.WaitEnd().message().find("not reading"), std::string::npos);
  close(p.accepted);
}

TEST(FramedConnectionTest, CloseEndsItWithItsReason) {
  const Pair p = Connect();
  End a, b;
  a.Open(p.connected, 1 << 20, 4 << 20);
  b.Open(p.accepted, 1 << 20, 4 << 20);
  a.conn->Close("done here");
  EXPECT_EQ(a.WaitEnd().message(), "done here");
  EXPECT_FALSE(b.WaitEnd().ok()) << "the peer sees the close too";
}

TEST(FramedConnectionTest, ConnectingWhereNobodyListensNamesTheAddress) {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&a), len), 0);
  ASSERT_EQ(getsockname(s, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const uint16_t port = ntohs(a.sin_port);
  close(s);  // bound once, nobody listens there now
  auto fd = ConnectTcp("127.0.0.1", port, Seconds(2));
  ASSERT_FALSE(fd.ok());
  EXPECT_NE(fd.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << fd.status().ToString();
  EXPECT_EQ(HostOf("[::1]:80"), "::1");
  EXPECT_EQ(HostOf("10.0.0.1:9001"), "10.0.0.1");
}

}  // namespace
}  // namespace sloserve::remote

#include "sloserve/remote/worker_set.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace sloserve::remote {
namespace {

TEST(WorkerSetTest, ParsesAFileOfAddresses) {
  auto parsed = ParseWorkersFile(
      "# workers\n10.0.0.5:9000\n\n  10.0.0.6:9000 , 10.0.0.7:9000  # two on a line\n"
      "10.0.0.5:9000\r\n[fd00::1]:9000");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, (std::vector<std::string>{"10.0.0.5:9000", "10.0.0.6:9000", "10.0.0.7:9000",
                                               "[fd00::1]:9000"}));
  ASSERT_TRUE(ParseWorkersFile("").ok());
  EXPECT_TRUE(ParseWorkersFile("# none\n\n")->empty());
}

TEST(WorkerSetTest, RefusesABadLineNamingIt) {
  auto parsed = ParseWorkersFile("10.0.0.5:9000\n10.0.0.6\n");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("line 2"), std::string::npos)
      << parsed.status().ToString();
  EXPECT_FALSE(ParseWorkersFile("10.0.0.5:0").ok());
}

TEST(WorkerSetTest, ParsesTheDnsForm) {
  EXPECT_TRUE(IsDnsTarget("dns:///sloserve-worker:9000"));
  EXPECT_FALSE(IsDnsTarget("10.0.0.5:9000"));
  auto target = ParseDnsTarget("dns:///sloserve-worker.default.svc.cluster.local:9000");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_EQ(target->first, "sloserve-worker.default.svc.cluster.local");
  EXPECT_EQ(target->second, "9000");
  for (const char* bad : {"dns:///name", "dns:///:9000", "dns:///name:0", "dns:///name:99999",
                          "dns:///name:x", "dns:///a/b:9000"}) {
    EXPECT_FALSE(ParseDnsTarget(bad).ok()) << bad;
  }
}

TEST(WorkerSetTest, ResolvesEveryAddressOfAName) {
  // /etc/hosts: no DNS server needed.
  auto found = ResolveWorkers("localhost", "9000");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_FALSE(found->empty());
  for (const std::string& a : *found) {
    EXPECT_TRUE(a == "127.0.0.1:9000" || a == "[::1]:9000") << a;
  }
  auto numeric = ResolveWorkers("127.0.0.1", "9001");
  ASSERT_TRUE(numeric.ok());
  EXPECT_EQ(*numeric, std::vector<std::string>{"127.0.0.1:9001"});
  // A name that does not exist is an empty set (a headless Service without ready pods).
  auto none = ResolveWorkers("no-such-worker.invalid", "9000");
  if (none.ok()) {
    EXPECT_TRUE(none->empty());
  }  // else Unavailable: no resolver answered here, the set is kept (not checked)
}

// The file is read again when its content changes; a missing or bad file keeps the set.
TEST(WorkerSetTest, FileSourceKeepsTheSetOnAnError) {
  const testing::ScopedTempDir dir("worker-set");
  const std::string path = dir.File("workers.txt");
  WorkerSetSource source(path, "", Seconds(5));
  const auto now = std::chrono::steady_clock::now();
  EXPECT_EQ(source.Refresh(now).code(), StatusCode::kNotFound);
  EXPECT_TRUE(source.addresses().empty());
  std::ofstream(path) << "127.0.0.1:9001\n";
  ASSERT_TRUE(source.Refresh(now).ok());
  EXPECT_EQ(source.addresses(), std::vector<std::string>{"127.0.0.1:9001"});
  std::ofstream(path) << "127.0.0.1:9001\n127.0.0.1\n";  // half written
  const Status bad = source.Refresh(now);
  EXPECT_NE(bad.message().find(path), std::string::npos) << bad.ToString();
  EXPECT_EQ(source.addresses(), std::vector<std::string>{"127.0.0.1:9001"});
  std::ofstream(path) << "127.0.0.1:9002, 127.0.0.1:9003\n";
  ASSERT_TRUE(source.Refresh(now).ok());
  EXPECT_EQ(source.addresses(), (std::vector<std::string>{"127.0.0.1:9002", "127.0.0.1:9003"}));
  std::ofstream(path) << "";
  ASSERT_TRUE(source.Refresh(now).ok());
  EXPECT_TRUE(source.addresses().empty());
}

// The name is looked up at the first Refresh and again once the interval has passed.
TEST(WorkerSetTest, DnsSourceLooksUpAtItsInterval) {
  WorkerSetSource source("", "dns:///127.0.0.1:9000", Seconds(5));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(source.Refresh(start).ok());
  EXPECT_EQ(source.addresses(), std::vector<std::string>{"127.0.0.1:9000"});
  WorkerSetSource bad("", "dns:///name-without-port", Seconds(5));
  EXPECT_EQ(bad.Refresh(start).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(bad.Refresh(start + Seconds(1)).ok()) << "not due: nothing read";
  EXPECT_FALSE(bad.Refresh(start + Seconds(6)).ok()) << "due again";
}

}  // namespace
}  // namespace sloserve::remote

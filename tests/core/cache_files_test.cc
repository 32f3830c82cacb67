// Cache files: written whole or not at all, and a cache dir pruned to its newest entries.
#include "sloserve/core/cache_files.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "support/temp_dir.h"

namespace sloserve {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::set<std::string> FileNames(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// A file whose modification time is `age` in the past.
void WriteAged(const fs::path& p, std::chrono::minutes age) {
  std::ofstream(p) << p.filename().string();
  fs::last_write_time(p, fs::file_time_type::clock::now() - age);
}

TEST(CacheFilesTest, WritesTheWholeFileAndLeavesNoTemporary) {
  testing::ScopedTempDir dir;
  const std::string path = dir.path() + "/a.bin";
  ASSERT_TRUE(WriteFileAtomically(path, [](std::ostream& out) { out << "old"; }).ok());
  ASSERT_TRUE(WriteFileAtomically(path, [](std::ostream& out) { out << "new contents"; }).ok());
  EXPECT_EQ(ReadAll(path), "new contents");
  EXPECT_EQ(FileNames(dir.path()), std::set<std::string>{"a.bin"});
}

TEST(CacheFilesTest, AnUnwritableDirIsAnErrorNamingTheFile) {
  testing::ScopedTempDir dir;
  const std::string path = dir.path() + "/missing/a.bin";
  const Status s = WriteFileAtomically(path, [](std::ostream& out) { out << "x"; });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  EXPECT_TRUE(FileNames(dir.path()).empty());
}

TEST(CacheFilesTest, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  testing::ScopedTempDir dir;
  const std::string path = dir.path() + "/a.bin";
  ASSERT_TRUE(WriteFileAtomically(path, [](std::ostream& out) { out << "old"; }).ok());
  const Status s = WriteFileAtomically(path, [](std::ostream& out) {
    out << "partial";
    out.setstate(std::ios::badbit);  // as a full disk would
  });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(ReadAll(path), "old");
  EXPECT_EQ(FileNames(dir.path()), std::set<std::string>{"a.bin"});
}

TEST(CacheFilesTest, PruneKeepsTheNewestOfItsExtensionAndDropsStaleTemporaries) {
  testing::ScopedTempDir dir;
  const fs::path d = dir.path();
  for (int i = 0; i < 5; ++i)
    WriteAged(d / ("e" + std::to_string(i) + ".set"), std::chrono::minutes(10 * i));
  WriteAged(d / "old.other", std::chrono::minutes(500));       // another extension
  WriteAged(d / "e9.set.tmp.1.0", std::chrono::minutes(120));  // a dead writer's
  WriteAged(d / "e8.set.tmp.2.0", std::chrono::minutes(1));    // a live writer's
  EXPECT_EQ(PruneCacheFiles(d.string(), ".set", 2), 4u);       // e2, e3, e4 and the stale temp
  EXPECT_EQ(FileNames(d.string()),
            (std::set<std::string>{"e0.set", "e1.set", "old.other", "e8.set.tmp.2.0"}));
  EXPECT_EQ(PruneCacheFiles(d.string(), ".set", 2), 0u);
  EXPECT_EQ(PruneCacheFiles(d.string() + "/absent", ".set", 2), 0u);
}

TEST(CacheFilesTest, TouchedFilesCountAsNew) {
  testing::ScopedTempDir dir;
  const fs::path d = dir.path();
  for (int i = 0; i < 3; ++i)
    WriteAged(d / ("e" + std::to_string(i) + ".set"), std::chrono::minutes(10 * i));
  TouchCacheFile((d / "e2.set").string());  // the oldest, just read
  PruneCacheFiles(d.string(), ".set", 2);
  EXPECT_EQ(FileNames(d.string()), (std::set<std::string>{"e0.set", "e2.set"}));
}

}  // namespace
}  // namespace sloserve

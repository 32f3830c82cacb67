// The profile's model_hash records (issue 36): parsed, written back in the canonical form,
// refused when malformed; HashModelFile tells two files apart.
#include <gtest/gtest.h>

#include <fstream>

#include "sloserve/profile/model_file_hash.h"
#include "sloserve/profile/profile.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

const char kHashedSuite[] =
    "sloserve-profile 1\n"
    "# sloserve profile suite; format: docs/profiles.md. All times are integer microseconds.\n"
    "suite hashed\n"
    "provenance test\n"
    "task digits 50000 input FP32 -1,4\n"
    "hardware local-1c 0 1 0\n"
    "variant a digits 90 1 100\n"
    "variant b digits 95 1 100\n"
    "model_hash a 00000000000000ff\n"
    "model_hash b d60153e6a261c3fd\n"
    "latency local-1c a 1 10 20\n"
    "latency local-1c b 1 30 40\n";

TEST(ModelHashTest, ParsedAndWrittenBack) {
  auto suite = ParseProfileText(kHashedSuite, "hashed.prof");
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
  EXPECT_EQ(suite->ModelHash(*suite->FindVariant("a")), 0xffu);
  EXPECT_EQ(suite->ModelHash(*suite->FindVariant("b")), 0xd60153e6a261c3fdu);
  EXPECT_EQ(WriteProfileText(*suite), kHashedSuite);
}

TEST(ModelHashTest, MalformedRecordsAreRefusedNamingTheField) {
  struct Case {
    std::string replace, with, expect;
  };
  const std::vector<Case> cases = {
      {"model_hash a 00000000000000ff", "model_hash a ff", "expected 16 hex digits"},
      {"model_hash a 00000000000000ff", "model_hash a 00000000000000fg", "expected 16 hex digits"},
      {"model_hash a 00000000000000ff", "model_hash c 00000000000000ff", "unknown variant"},
      {"model_hash b d60153e6a261c3fd", "model_hash a d60153e6a261c3fd", "duplicate model_hash"},
      {"model_hash a 00000000000000ff", "model_hash a", "model_hash"},
  };
  for (const Case& c : cases) {
    std::string text = kHashedSuite;
    text.replace(text.find(c.replace), c.replace.size(), c.with);
    auto suite = ParseProfileText(text, "bad.prof");
    ASSERT_FALSE(suite.ok()) << c.with;
    EXPECT_NE(suite.status().message().find(c.expect), std::string::npos)
        << c.with << ": " << suite.status().message();
    EXPECT_NE(suite.status().message().find("bad.prof:"), std::string::npos)
        << suite.status().message();
  }
}

TEST(ModelHashTest, FilesWithOtherBytesHashDifferently) {
  testing::ScopedTempDir dir("hash");
  std::ofstream(dir.path() + "/a") << "model bytes";
  std::ofstream(dir.path() + "/b") << "model bytez";
  std::ofstream(dir.path() + "/c") << "model bytes";
  auto a = HashModelFile(dir.path() + "/a");
  auto b = HashModelFile(dir.path() + "/b");
  auto c = HashModelFile(dir.path() + "/c");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(*a, *c);
  EXPECT_EQ(ModelHashHex(0xffu), "00000000000000ff");
  auto missing = HashModelFile(dir.path() + "/none");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir.path() + "/none"), std::string::npos);
}

}  // namespace
}  // namespace sloserve

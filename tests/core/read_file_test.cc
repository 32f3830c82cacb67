#include "sloserve/core/read_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace sloserve {
namespace {

TEST(ReadFileBounded, ReadsAFileUpToTheLimitAndRefusesDirectoriesAndMore) {
  testing::ScopedTempDir dir;
  const std::string path = dir.File("c.yaml");
  std::ofstream(path, std::ios::binary) << std::string(100, 'x');
  StatusOr<std::string> text = ReadFileBounded(path, "config file", 100);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, std::string(100, 'x'));

  StatusOr<std::string> big = ReadFileBounded(path, "config file", 99);
  EXPECT_EQ(big.status().message(), path + ": config file larger than 99 bytes (the limit)");
  EXPECT_EQ(ReadFileBounded(path, "config file", 0).status().code(), StatusCode::kInvalidArgument);
  // An endless stream stops at the limit.
  EXPECT_EQ(ReadFileBounded("/dev/zero", "config file", size_t{8} << 20).status().message(),
            "/dev/zero: config file larger than 8 MiB (the limit)");

  EXPECT_EQ(ReadFileBounded(dir.path(), "config file", 100).status().message(),
            dir.path() + ": is a directory, not a config file");
  EXPECT_EQ(ReadFileBounded(dir.File("absent"), "config file", 100).status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace sloserve

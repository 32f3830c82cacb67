#include "sloserve/core/embedded_files.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace sloserve {
namespace {

std::string ReadSourceFile(const std::string& rel) {
  std::ifstream in(std::string(SLOSERVE_SOURCE_DIR) + "/" + rel, std::ios::binary);
  EXPECT_TRUE(in) << rel;
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

TEST(EmbeddedFilesTest, TableIsSortedAndHoldsTheShippedFiles) {
  const std::vector<EmbeddedFile>& files = EmbeddedFiles();
  ASSERT_GE(files.size(), 3u);
  EXPECT_TRUE(
      std::is_sorted(files.begin(), files.end(),
                     [](const EmbeddedFile& a, const EmbeddedFile& b) { return a.name < b.name; }));
  for (const EmbeddedFile& f : files) {
    SCOPED_TRACE(std::string(f.name));
    EXPECT_FALSE(f.data.empty());
    EXPECT_EQ(FindEmbeddedFile(f.name), &f);  // every entry is found by its own name
  }
}

TEST(EmbeddedFilesTest, FindHitReturnsTheFileBytes) {
  for (const std::string name : {"ramsis-image.prof", "traces/twitter_rps_day15.txt"}) {
    SCOPED_TRACE(name);
    const EmbeddedFile* f = FindEmbeddedFile(name);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->name, name);
    EXPECT_EQ(std::string(f->data), ReadSourceFile("profiles/" + name));
  }
}

TEST(EmbeddedFilesTest, FindMissReturnsNull) {
  EXPECT_EQ(FindEmbeddedFile("no-such-suite.prof"), nullptr);
  EXPECT_EQ(FindEmbeddedFile(""), nullptr);
  EXPECT_EQ(FindEmbeddedFile("ramsis-image"), nullptr);  // a prefix of a name is no match
  EXPECT_EQ(FindEmbeddedFile("ramsis-image.prof2"), nullptr);
  EXPECT_EQ(FindEmbeddedFile("profiles/ramsis-image.prof"), nullptr);  // names are relative
  EXPECT_EQ(FindEmbeddedFile("zzz-after-everything"), nullptr);        // past the end
}

TEST(EmbeddedFilesTest, ReadFileOrEmbeddedReadsEitherSource) {
  StatusOr<std::string> embedded =
      ReadFileOrEmbedded(std::string(kEmbeddedPrefix) + "ramsis-text.prof", "profile");
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  EXPECT_EQ(*embedded, ReadSourceFile("profiles/ramsis-text.prof"));

  StatusOr<std::string> missing_embedded =
      ReadFileOrEmbedded(std::string(kEmbeddedPrefix) + "nope.txt", "trace file");
  EXPECT_EQ(missing_embedded.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing_embedded.status().message(), "no embedded trace file 'embedded:nope.txt'");

  testing::ScopedTempDir dir;
  const std::string path = dir.File("x.txt");
  const std::string bytes("line 1\nline\0 2\n", 15);  // binary-safe, embedded NUL included
  std::ofstream(path, std::ios::binary) << bytes;
  StatusOr<std::string> disk = ReadFileOrEmbedded(path, "trace file");
  ASSERT_TRUE(disk.ok()) << disk.status().ToString();
  EXPECT_EQ(*disk, bytes);

  StatusOr<std::string> missing_disk = ReadFileOrEmbedded(dir.File("absent.yaml"), "config");
  EXPECT_EQ(missing_disk.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing_disk.status().message(),
            "cannot open config '" + dir.File("absent.yaml") + "'");
}

}  // namespace
}  // namespace sloserve

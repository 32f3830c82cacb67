// The suite cache (issue 15): a suite read back from its cache file is the suite parsed
// from the text, and a cache file of other text, or a damaged one, is never used.
#include "sloserve/profile/suite_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "profile/profile_test_data.h"
#include "sloserve/core/embedded_files.h"
#include "support/temp_dir.h"

using sloserve::profile_test_data::ToVector;

namespace sloserve {
namespace {

// The tiny suite plus an unsorted list and a load component (a service-latency table).
std::string TinyText() {
  std::string text;
  for (const char* line : profile_test_data::kTinySuite) text += std::string(line) + "\n";
  text += "latency cpu4 big 8 9000 7000 8000 7500\n";
  text += "load cpu4 big 8 40 10 30 20\n";
  return text;
}

// Every distribution of both suites: same samples in both orders and the same mean.
void ExpectSameDistributions(const ProfileSuite& a, const ProfileSuite& b) {
  std::vector<std::tuple<int, HardwareId, VariantId, int, const LatencyDistribution*>> da, db;
  a.ForEachDistribution(
      [&](ProfileSuite::SampleTable t, HardwareId hw, VariantId v, int rows,
          const LatencyDistribution& d) { da.emplace_back(static_cast<int>(t), hw, v, rows, &d); });
  b.ForEachDistribution(
      [&](ProfileSuite::SampleTable t, HardwareId hw, VariantId v, int rows,
          const LatencyDistribution& d) { db.emplace_back(static_cast<int>(t), hw, v, rows, &d); });
  ASSERT_EQ(da.size(), db.size());
  for (size_t i = 0; i < da.size(); ++i) {
    const auto& [ta, hwa, va, ra, pa] = da[i];
    const auto& [tb, hwb, vb, rb, pb] = db[i];
    ASSERT_EQ(std::tie(ta, hwa, va, ra), std::tie(tb, hwb, vb, rb)) << i;
    EXPECT_TRUE(std::ranges::equal(pa->samples_us(), pb->samples_us())) << i;
    EXPECT_TRUE(std::ranges::equal(pa->sorted_samples_us(), pb->sorted_samples_us())) << i;
    EXPECT_EQ(pa->Mean(), pb->Mean()) << i;
  }
}

TEST(SuiteCacheTest, CachedSuiteEqualsTheParsedOne) {
  testing::ScopedTempDir dir;
  const std::string text = TinyText();
  auto parsed = ParseProfileText(text, "tiny");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  bool from_cache = true;
  auto first = ParseProfileTextCached(text, "tiny", dir.path(), 0, &from_cache);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(from_cache);
  EXPECT_TRUE(std::filesystem::exists(SuiteCachePath(dir.path(), text)));
  auto second = ParseProfileTextCached(text, "tiny", dir.path(), 0, &from_cache);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(from_cache);
  // Everything the text form holds (metadata, samples in measurement order), then the
  // sorted lists, means and the derived service latencies.
  EXPECT_EQ(WriteProfileText(*second), WriteProfileText(*parsed));
  ExpectSameDistributions(*second, *parsed);
  const HardwareId hw = *second->FindHardware("cpu4");
  const VariantId big = *second->FindVariant("big");
  const LatencyDistribution* service = second->ServiceLatency(hw, big, 8);
  ASSERT_NE(service, nullptr);
  EXPECT_EQ(ToVector(service->samples_us()), (std::vector<int64_t>{9040, 7010, 8030, 7520}));
  EXPECT_EQ(second->Latency(hw, big, 5)->Quantile(0.5), Micros(7750));
  // Copies of a cached suite outlive the suite they came from (they share the mapping).
  ProfileSuite copy = *second;
  second = InternalError("dropped");
  EXPECT_EQ(WriteProfileText(copy), WriteProfileText(*parsed));
  // Small texts are parsed without a cache below the threshold.
  testing::ScopedTempDir other;
  ASSERT_TRUE(
      ParseProfileTextCached(text, "tiny", other.path(), text.size() + 1, &from_cache).ok());
  EXPECT_FALSE(from_cache);
  EXPECT_FALSE(std::filesystem::exists(SuiteCachePath(other.path(), text)));
}

TEST(SuiteCacheTest, CacheOfOtherTextOrDamagedIsNotUsed) {
  testing::ScopedTempDir dir;
  const std::string text = TinyText();
  auto parsed = ParseProfileText(text, "tiny");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const std::string path = dir.File("tiny.profc");
  EXPECT_EQ(ReadSuiteCache(path, text, "tiny").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(WriteSuiteCache(path, text, *parsed).ok());
  ASSERT_TRUE(ReadSuiteCache(path, text, "tiny").ok());

  // Another source of the same size (one sample changed).
  std::string edited = text;
  edited.replace(edited.find("9000"), 4, "9001");
  ASSERT_EQ(edited.size(), text.size());
  auto stale = ReadSuiteCache(path, edited, "tiny");
  EXPECT_EQ(stale.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(stale.status().message().find("other source"), std::string::npos)
      << stale.status().ToString();

  // Truncated: the sizes in the header no longer match the file.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 8);
  auto cut = ReadSuiteCache(path, text, "tiny");
  EXPECT_EQ(cut.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(cut.status().message().find("sizes"), std::string::npos) << cut.status().ToString();

  // Not a cache file at all.
  std::ofstream(path, std::ios::trunc) << std::string(200, 'x');
  EXPECT_EQ(ReadSuiteCache(path, text, "tiny").status().code(), StatusCode::kFailedPrecondition);

  // Through ParseProfileTextCached a bad cache file is replaced by the parse.
  const std::string cached_path = SuiteCachePath(dir.path(), text);
  std::ofstream(cached_path, std::ios::trunc) << std::string(200, 'x');
  bool from_cache = true;
  auto reparsed = ParseProfileTextCached(text, "tiny", dir.path(), 0, &from_cache);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
  EXPECT_FALSE(from_cache);
  EXPECT_EQ(WriteProfileText(*reparsed), WriteProfileText(*parsed));
  ASSERT_TRUE(ParseProfileTextCached(text, "tiny", dir.path(), 0, &from_cache).ok());
  EXPECT_TRUE(from_cache);
}

TEST(SuiteCacheTest, ParseErrorsAreTheParsersAndNothingIsCached) {
  testing::ScopedTempDir dir;
  std::string text = TinyText() + "latency cpu4 small 1 -5\n";
  auto r = ParseProfileTextCached(text, "bad.prof", dir.path(), 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), ParseProfileText(text, "bad.prof").status().message());
  EXPECT_FALSE(std::filesystem::exists(SuiteCachePath(dir.path(), text)));
}

TEST(SuiteCacheTest, TheDirKeepsOnlyTheNewestCaches) {
  testing::ScopedTempDir dir;
  const size_t suites = kKeptSuiteCaches + 3;
  for (size_t i = 0; i < suites; ++i) {
    const std::string text = TinyText() + "# edit " + std::to_string(i) + "\n";
    ASSERT_TRUE(ParseProfileTextCached(text, "tiny", dir.path(), 0).ok());
  }
  size_t caches = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    caches += e.path().extension() == ".profc" ? 1 : 0;
  }
  EXPECT_EQ(caches, kKeptSuiteCaches);
  // The newest text's cache is among the kept ones.
  const std::string last = TinyText() + "# edit " + std::to_string(suites - 1) + "\n";
  EXPECT_TRUE(std::filesystem::exists(SuiteCachePath(dir.path(), last)));
}

TEST(SuiteCacheTest, EmbeddedKairosSuiteRoundTrips) {
  testing::ScopedTempDir dir;
  const EmbeddedFile* f = FindEmbeddedFile("kairos-recsys.prof");
  ASSERT_NE(f, nullptr);
  // The first load parses (the same parse as ParseProfileText) and writes the cache.
  bool from_cache = true;
  auto parsed =
      ParseProfileTextCached(f->data, "kairos", dir.path(), kMinCachedSuiteBytes, &from_cache);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_FALSE(from_cache);
  auto cached =
      ParseProfileTextCached(f->data, "kairos", dir.path(), kMinCachedSuiteBytes, &from_cache);
  ASSERT_TRUE(cached.ok()) << cached.status().ToString();
  EXPECT_TRUE(from_cache);
  // 2.2 MB, over the threshold, with load components (all three sample tables).
  ASSERT_GE(f->data.size(), kMinCachedSuiteBytes);
  EXPECT_EQ(cached->variants().size(), parsed->variants().size());
  EXPECT_FALSE(cached->LoadBatchSizes(0, 0).empty());
  ExpectSameDistributions(*cached, *parsed);
}

}  // namespace
}  // namespace sloserve

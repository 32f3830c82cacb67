// ProfileSuite lookups (round-up of rows, service latency) and suite resolution.
#include "sloserve/profile/profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "profile/profile_test_data.h"
#include "support/temp_dir.h"

using sloserve::profile_test_data::ToVector;

namespace sloserve {
namespace {

ProfileSuite Batches1248() {
  ProfileSuite s;
  s.set_name("b");
  s.set_provenance("test");
  TaskId t = s.AddTask({.name = "t", .default_slo = Millis(10)});
  s.AddHardware({.name = "h"});
  s.AddVariant({.name = "v", .task = t});
  s.AddVariant({.name = "unprofiled", .task = t});
  // Added out of order: the table keeps batch sizes ascending.
  for (int rows : {4, 1, 8, 2}) s.AddLatency(0, 0, rows, LatencyDistribution({rows * 1000}));
  return s;
}

TEST(ProfileSuiteTest, LatencyRoundsRowsUpToNextProfiledBatch) {
  ProfileSuite s = Batches1248();
  EXPECT_EQ(s.BatchSizes(0, 0), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(s.MaxBatch(0, 0), 8);
  EXPECT_EQ(s.Latency(0, 0, 1)->Max(), Millis(1));
  EXPECT_EQ(s.Latency(0, 0, 3)->Max(), Millis(4));
  EXPECT_EQ(s.Latency(0, 0, 5)->Max(), Millis(8));
  EXPECT_EQ(s.Latency(0, 0, 8)->Max(), Millis(8));
  EXPECT_EQ(s.Latency(0, 0, 9), nullptr);
  EXPECT_EQ(s.Latency(0, 1, 1), nullptr);  // no profile for this variant
  EXPECT_TRUE(s.BatchSizes(0, 1).empty());
  EXPECT_EQ(s.MaxBatch(0, 1), 0);
  EXPECT_EQ(s.LoadLatency(0, 0, 1), nullptr);
  EXPECT_EQ(s.VariantsOfTask(0), (std::vector<VariantId>{0, 1}));
  EXPECT_EQ(s.FindVariant("unprofiled"), 1u);
  EXPECT_EQ(s.FindVariant("nope"), std::nullopt);
  EXPECT_EQ(s.FindHardware("h"), 0u);
  EXPECT_EQ(s.FindTask("t"), 0u);
}

TEST(ProfileSuiteTest, ServiceLatencySumsPairedLoadSamples) {
  ProfileSuite s = Batches1248();
  // No load component: service latency is the latency itself.
  EXPECT_EQ(s.ServiceLatency(0, 0, 3), s.Latency(0, 0, 3));
  s.AddLatency(0, 0, 10, LatencyDistribution({100, 200, 300}));
  s.AddLoadLatency(0, 0, 10, LatencyDistribution({30, 10, 20}));
  const LatencyDistribution* sum = s.ServiceLatency(0, 0, 9);
  ASSERT_NE(sum, nullptr);
  // Paired index by index (130, 210, 320), not sorted-and-added.
  EXPECT_EQ(ToVector(sum->samples_us()), (std::vector<int64_t>{130, 210, 320}));
  EXPECT_EQ(s.LoadBatchSizes(0, 0), (std::vector<int>{10}));
  EXPECT_EQ(s.ServiceLatency(0, 0, 11), nullptr);
  // Replacing the latency with an unpaired length drops the sum.
  s.AddLatency(0, 0, 10, LatencyDistribution({100}));
  EXPECT_EQ(s.ServiceLatency(0, 0, 10), s.Latency(0, 0, 10));
}

class LoadSuiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.path();
    std::ofstream out(dir_ + "/tiny.prof");
    for (const char* line : profile_test_data::kTinySuite) out << line << "\n";
  }
  void TearDown() override { unsetenv("SLOSERVE_PROFILES_DIR"); }
  testing::ScopedTempDir temp_{"load-suite"};
  std::string dir_;
};

TEST_F(LoadSuiteTest, ResolvesNamesPathsAndEnvOverride) {
  StatusOr<ProfileSuite> by_path = LoadSuite(dir_ + "/tiny.prof");
  ASSERT_TRUE(by_path.ok()) << by_path.status().ToString();
  EXPECT_EQ(by_path->name(), "tiny");

  EXPECT_EQ(ProfilesDir(), "");  // unset: the compiled-in suites
  StatusOr<ProfileSuite> embedded = LoadSuite("ramsis-text");
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  StatusOr<ProfileSuite> typo = LoadSuite("ramsis-txt");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().code(), StatusCode::kNotFound);
  EXPECT_NE(typo.status().message().find("embedded suites: "), std::string::npos);
  EXPECT_NE(typo.status().message().find("ramsis-text"), std::string::npos);
  setenv("SLOSERVE_PROFILES_DIR", dir_.c_str(), 1);
  EXPECT_EQ(ProfilesDir(), dir_);
  StatusOr<ProfileSuite> by_name = LoadSuite("tiny");
  ASSERT_TRUE(by_name.ok()) << by_name.status().ToString();
  EXPECT_EQ(by_name->variants().size(), 2u);

  StatusOr<ProfileSuite> missing = LoadSuite("no-such-suite");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no-such-suite.prof"), std::string::npos);
  // A name ending in the extension is a path (relative to the working directory).
  EXPECT_FALSE(LoadSuite("tiny.prof").ok());
  EXPECT_FALSE(LoadSuite("").ok());
}

TEST_F(LoadSuiteTest, FileErrorsNameThePath) {
  {
    std::ofstream out(dir_ + "/tiny.prof");
    out << "sloserve-profile 1\nsuite x\nprovenance p\nvariant v nosuchtask 1 1 1\n";
  }
  StatusOr<ProfileSuite> s = LoadProfileFile(dir_ + "/tiny.prof");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(dir_ + "/tiny.prof:4: variant: field 'task'"),
            std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace sloserve

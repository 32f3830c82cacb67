// The committed suites under profiles/: they load, have the expected shape, are in the
// writer's canonical form, and (when ../shared/datasets exists) match their sources.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sloserve/core/embedded_files.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace {

const std::string kDatasets = std::string(SLOSERVE_SOURCE_DIR) + "/../shared/datasets";
const std::string kProfiles = std::string(SLOSERVE_SOURCE_DIR) + "/profiles";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

ProfileSuite MustLoad(const std::string& name) {
  StatusOr<ProfileSuite> s = LoadSuite(name);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : ProfileSuite();
}

// The converter and WriteProfileText agree byte for byte, so suites stay canonical.
void ExpectCanonical(const ProfileSuite& s) {
  const std::string path = kProfiles + "/" + s.name() + kProfileExtension;
  EXPECT_TRUE(WriteProfileText(s) == ReadFile(path)) << path << " is not in canonical form";
}

size_t TotalSamples(const ProfileSuite& s) {
  size_t n = 0;
  for (const auto& [hw, v] : s.ProfiledPairs()) {
    for (int rows : s.BatchSizes(hw, v)) n += s.Latency(hw, v, rows)->size();
  }
  return n;
}

void ExpectProvenance(const ProfileSuite& s, const std::string& repo) {
  EXPECT_NE(s.provenance().find(repo), std::string::npos) << s.provenance();
  EXPECT_NE(s.provenance().find("tools/convert_profiles.py"), std::string::npos);
}

// numpy.quantile(x, q) with the default linear method, on the raw source values.
double NumpyQuantile(std::vector<double> x, double q) {
  std::sort(x.begin(), x.end());
  const double h = static_cast<double>(x.size() - 1) * q;
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= x.size()) return x.back();
  return x[lo] + (h - static_cast<double>(lo)) * (x[lo + 1] - x[lo]);
}

std::vector<double> ReadJsonList(const std::string& path) {
  return nlohmann::json::parse(ReadFile(path)).get<std::vector<double>>();
}

TEST(EmbeddedSuitesTest, RamsisImage) {
  ProfileSuite s = MustLoad("ramsis-image");
  ExpectProvenance(s, "dmmendo/RAMSIS commit 9b74967");
  ASSERT_EQ(s.variants().size(), 26u);
  ASSERT_EQ(s.hardware().size(), 1u);
  EXPECT_EQ(s.hardware()[0].name, "n1-4cpu");
  EXPECT_DOUBLE_EQ(s.hardware()[0].price_per_hour, 0.19);
  EXPECT_EQ(s.tasks()[0].default_slo, Millis(150));
  // Every model is profiled from batch 1 upwards without gaps; the source stops larger
  // models early (efficientnet_b7 at 7), the small ones reach 32.
  for (VariantId v = 0; v < s.variants().size(); ++v) {
    const std::vector<int>& b = s.BatchSizes(0, v);
    ASSERT_FALSE(b.empty()) << s.variants()[v].name;
    EXPECT_EQ(b.front(), 1);
    EXPECT_EQ(static_cast<int>(b.size()), b.back()) << s.variants()[v].name;
    EXPECT_LE(b.back(), 32);
    EXPECT_GT(s.variants()[v].accuracy, 50);
  }
  EXPECT_EQ(s.MaxBatch(0, *s.FindVariant("resnet18")), 32);
  EXPECT_EQ(s.MaxBatch(0, *s.FindVariant("efficientnet_b7")), 7);
  EXPECT_DOUBLE_EQ(s.variants()[*s.FindVariant("shufflenet_v2_x0_5")].accuracy, 57.972);
  EXPECT_EQ(TotalSamples(s), 1646166u);  // all raw samples kept
  ExpectCanonical(s);

  if (!std::filesystem::exists(kDatasets)) GTEST_SKIP() << "no " << kDatasets;
  const std::vector<double> secs =
      ReadJsonList(kDatasets + "/ramsis/image_cloud_cpu/resnet18/resnet18_bsize-1_profile.json");
  const LatencyDistribution* d = s.Latency(0, *s.FindVariant("resnet18"), 1);
  ASSERT_EQ(d->size(), secs.size());
  EXPECT_NEAR(static_cast<double>(d->Quantile(0.95).count()), NumpyQuantile(secs, 0.95) * 1e6, 1.0);
  EXPECT_EQ(d->samples_us().front(), SecondsF(secs.front()).count());
}

TEST(EmbeddedSuitesTest, RamsisText) {
  ProfileSuite s = MustLoad("ramsis-text");
  ExpectProvenance(s, "dmmendo/RAMSIS commit 9b74967");
  ASSERT_EQ(s.variants().size(), 5u);
  EXPECT_EQ(s.tasks()[0].name, "text");
  EXPECT_EQ(s.tasks()[0].default_slo, Millis(100));
  for (VariantId v = 0; v < 5; ++v) {
    const int expected = s.variants()[v].name == "bert_base" ? 10 : 32;
    EXPECT_EQ(s.BatchSizes(0, v).size(), static_cast<size_t>(expected));
    EXPECT_EQ(s.MaxBatch(0, v), expected);
  }
  EXPECT_DOUBLE_EQ(s.variants()[*s.FindVariant("bert_base")].accuracy, 84.56);
  EXPECT_EQ(TotalSamples(s), 13800u);
  ExpectCanonical(s);
}

TEST(EmbeddedSuitesTest, KairosRecsys) {
  ProfileSuite s = MustLoad("kairos-recsys");
  ExpectProvenance(s, "boringlee24/hpdc23-kairos");
  ASSERT_EQ(s.tasks().size(), 5u);
  ASSERT_EQ(s.variants().size(), 5u);
  ASSERT_EQ(s.hardware().size(), 4u);
  EXPECT_EQ(s.tasks()[*s.FindTask("rm2")].default_slo, Millis(350));
  EXPECT_EQ(s.tasks()[*s.FindTask("ncf")].default_slo, Millis(5));
  EXPECT_EQ(s.tasks()[*s.FindTask("dien")].default_slo, Millis(35));
  EXPECT_EQ(s.hardware()[*s.FindHardware("c5n.2xlarge")].cores, 8);
  EXPECT_DOUBLE_EQ(s.hardware()[*s.FindHardware("g4dn.xlarge")].price_per_hour, 0.526);
  std::vector<int> rows;
  for (int r = 10; r <= 1000; r += 10) rows.push_back(r);
  for (HardwareId hw = 0; hw < 4; ++hw) {
    for (VariantId v = 0; v < 5; ++v) {
      EXPECT_EQ(s.variants()[v].task, *s.FindTask(s.variants()[v].name));
      ASSERT_EQ(s.BatchSizes(hw, v), rows);
      ASSERT_EQ(s.LoadBatchSizes(hw, v), rows);
      EXPECT_EQ(s.Latency(hw, v, 1000)->size(), 99u);  // warm-up sample dropped
      EXPECT_EQ(s.LoadLatency(hw, v, 1000)->size(), 99u);
    }
  }
  const HardwareId g4 = *s.FindHardware("g4dn.xlarge");
  const VariantId ncf = *s.FindVariant("ncf");
  EXPECT_EQ(s.Latency(g4, ncf, 15), s.Latency(g4, ncf, 20));  // rounds up like Kairos
  EXPECT_EQ(s.Latency(g4, ncf, 1001), nullptr);
  const LatencyDistribution* sum = s.ServiceLatency(g4, ncf, 10);
  const LatencyDistribution* lat = s.Latency(g4, ncf, 10);
  const LatencyDistribution* load = s.LoadLatency(g4, ncf, 10);
  ASSERT_EQ(sum->size(), 99u);
  for (size_t i = 0; i < sum->size(); ++i) {
    EXPECT_EQ(sum->samples_us()[i], lat->samples_us()[i] + load->samples_us()[i]);
  }
  ExpectCanonical(s);

  if (!std::filesystem::exists(kDatasets)) GTEST_SKIP() << "no " << kDatasets;
  // The authors' rule: drop the argmax of latency + load from both lists.
  std::vector<double> ms = ReadJsonList(kDatasets + "/kairos/latency/g4dn.xlarge/ncf_10_1.json");
  std::vector<double> ld =
      ReadJsonList(kDatasets + "/kairos/latency/logs_load/g4dn.xlarge/ncf_10_1.json");
  size_t drop = 0;
  for (size_t i = 1; i < ms.size(); ++i) {
    if (ms[i] + ld[i] > ms[drop] + ld[drop]) drop = i;
  }
  ms.erase(ms.begin() + static_cast<std::ptrdiff_t>(drop));
  ASSERT_EQ(lat->size(), ms.size());
  for (size_t i = 0; i < ms.size(); ++i) {
    EXPECT_EQ(lat->samples_us()[i], MillisF(ms[i]).count()) << i;
  }
}

TEST(EmbeddedSuitesTest, InfAdapterResnet) {
  ProfileSuite s = MustLoad("infadapter-resnet");
  ExpectProvenance(s, "InfAdapter commit 398b18f");
  ASSERT_EQ(s.variants().size(), 5u);
  ASSERT_EQ(s.hardware().size(), 20u);
  EXPECT_EQ(s.tasks()[0].default_slo, Millis(750));
  const VariantId r18 = *s.FindVariant("resnet18");
  const VariantId r152 = *s.FindVariant("resnet152");
  EXPECT_DOUBLE_EQ(s.variants()[r18].accuracy, 69.758);
  EXPECT_EQ(s.variants()[r152].load_time, Millis(8520));
  for (HardwareId hw = 0; hw < 20; ++hw) {
    EXPECT_EQ(s.hardware()[hw].cores, static_cast<int>(hw) + 1);
    for (VariantId v = 0; v < 5; ++v) {
      ASSERT_EQ(s.BatchSizes(hw, v), std::vector<int>{1});
      EXPECT_EQ(s.Latency(hw, v, 1)->size(), 1u);  // the p99, one number
    }
  }
  EXPECT_EQ(s.capacity_points().size(), 400u);
  // capacity_result_Feb_21.csv: cpu 1, ARCH 18, SLA 750: p99 389.09 ms, capacity 19, sat 22.
  const HardwareId c1 = *s.FindHardware("cpu-1c");
  EXPECT_EQ(s.Latency(c1, r18, 1)->Max(), Micros(389090));
  bool found = false;
  for (const CapacityPoint& c : s.capacity_points()) {
    if (c.hardware == c1 && c.variant == r18 && c.slo == Millis(750)) {
      found = true;
      EXPECT_EQ(c.p99, Micros(389090));
      EXPECT_DOUBLE_EQ(c.capacity_rps, 19);
      EXPECT_DOUBLE_EQ(c.saturation_rps, 22);
    }
  }
  EXPECT_TRUE(found);
  ExpectCanonical(s);
}

// The binary carries profiles/ (suites, traces, policy sets) byte for byte, so it runs
// without the source tree.
TEST(EmbeddedSuitesTest, CompiledInCopiesMatchTheFiles) {
  size_t suites = 0;
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    const std::string path = kProfiles + "/" + std::string(f.name);
    EXPECT_TRUE(f.data == ReadFile(path)) << path << " differs from its embedded copy";
    suites += f.name.ends_with(kProfileExtension) ? 1 : 0;
  }
  EXPECT_GE(suites, 4u);
  ASSERT_NE(FindEmbeddedFile("traces/twitter_04_25_norm.txt"), nullptr);
  EXPECT_EQ(FindEmbeddedFile("no-such-file"), nullptr);
  auto trace = ReadFileOrEmbedded("embedded:traces/twitter_04_25_norm.txt", "trace file");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->rfind("# provenance: ", 0), 0u);
  EXPECT_FALSE(ReadFileOrEmbedded("embedded:traces/none.txt", "trace file").ok());
}

TEST(EmbeddedSuitesTest, TracesHaveProvenanceHeaders) {
  const std::string dir = kProfiles + "/traces/";
  for (const char* name :
       {"twitter_04_25_norm.txt", "twitter_rps_day15_82-103min.txt", "twitter_rps_day15.txt"}) {
    const std::string text = ReadFile(dir + name);
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_EQ(text.rfind("# provenance: ", 0), 0u) << name;
  }
  const std::string window = ReadFile(dir + "twitter_rps_day15_82-103min.txt");
  EXPECT_EQ(std::count(window.begin(), window.end(), '\n'), 1 + 1260);
}

}  // namespace
}  // namespace sloserve

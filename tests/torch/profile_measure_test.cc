// `profile measure` on the two smallest committed variants: a suite the loader reads back,
// with raw samples per batch size, the held-out accuracy measured through the executor,
// measured cold starts, the accounted memory and each model file's hash.
#include "sloserve/torch/profile_measure.h"

#include <gtest/gtest.h>

#include "sloserve/profile/model_file_hash.h"
#include "torch/torch_test_util.h"

namespace sloserve {
namespace {

TEST(ProfileMeasureTest, MeasuresLatencyAccuracyLoadTimeAndMemory) {
  auto repo = LoadModelRepository(testing::CommittedRepository());
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  MeasureOptions o;
  o.batch_sizes = {1, 3};
  o.cores = {1};
  o.samples = 4;
  o.warmup = 1;
  o.loads = 2;
  o.variants = {"pooled_linear", "mlp_small"};
  auto suite = MeasureRepositoryProfile(*repo, o);
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
  ASSERT_EQ(suite->variants().size(), 2u);
  ASSERT_EQ(suite->hardware().size(), 1u);
  EXPECT_EQ(suite->hardware()[0].name, "local-1c");
  EXPECT_EQ(suite->tasks()[0].input_shape, (std::vector<int64_t>{-1, 1, 8, 8}));
  // The repository's output, so serve's metadata declares what the model answers.
  EXPECT_EQ(suite->tasks()[0].output_name, "scores");
  EXPECT_EQ(suite->tasks()[0].output_shape, (std::vector<int64_t>{-1, 10}));
  for (VariantId v = 0; v < 2; ++v) {
    const VariantSpec& spec = suite->variants()[v];
    const RepoVariant* cfg = repo->FindVariant(spec.name);
    ASSERT_NE(cfg, nullptr);
    // Measured on heldout.json through the executor = the training script's figure.
    EXPECT_NEAR(spec.accuracy, cfg->accuracy, 0.01) << spec.name;
    EXPECT_NEAR(spec.memory_mb * 1024 * 1024, static_cast<double>(cfg->memory_bytes), 1)
        << spec.name;
    EXPECT_GT(spec.load_time, Duration(0));
    EXPECT_EQ(suite->BatchSizes(0, v), (std::vector<int>{1, 3}));
    EXPECT_EQ(suite->Latency(0, v, 1)->size(), 4u);
    EXPECT_EQ(suite->Latency(0, v, 3)->size(), 4u);
    // The file measured, for serve's staleness check (issue 36).
    auto hash = HashModelFile(cfg->model_path);
    ASSERT_TRUE(hash.ok());
    EXPECT_EQ(suite->ModelHash(v), std::optional<uint64_t>(*hash)) << spec.name;
  }
  // The text form reads back as the same suite.
  const std::string text = WriteProfileText(*suite);
  auto back = ParseProfileText(text, "measured.prof");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(WriteProfileText(*back), text);
}

// `gap`: each batch after an idle wait, as serve's worker runs at a light load
// (docs/torch.md); the provenance says so, and a profile without one says nothing of it.
TEST(ProfileMeasureTest, AGapBeforeEachBatchIsRecordedInTheProvenance) {
  auto repo = LoadModelRepository(testing::CommittedRepository());
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  MeasureOptions o;
  o.batch_sizes = {1, 2};
  o.samples = 3;
  o.warmup = 1;
  o.loads = 1;
  o.variants = {"pooled_linear"};
  auto plain = MeasureRepositoryProfile(*repo, o);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->provenance().find("idle"), std::string::npos);
  o.gap = Micros(1500);
  auto gapped = MeasureRepositoryProfile(*repo, o);
  ASSERT_TRUE(gapped.ok()) << gapped.status().ToString();
  EXPECT_NE(gapped->provenance().find("each batch after 1.500 ms idle (--gap-ms)"),
            std::string::npos)
      << gapped->provenance();
  EXPECT_EQ(gapped->Latency(0, 0, 1)->size(), 3u);
  EXPECT_EQ(gapped->Latency(0, 0, 2)->size(), 3u);
  o.gap_exponential = true;
  auto drawn = MeasureRepositoryProfile(*repo, o);
  ASSERT_TRUE(drawn.ok()) << drawn.status().ToString();
  EXPECT_NE(drawn->provenance().find("an exponentially distributed idle time of mean 1.500 ms"),
            std::string::npos)
      << drawn->provenance();
  o.gap = Micros(-1);
  EXPECT_FALSE(MeasureRepositoryProfile(*repo, o).ok());
}

TEST(ProfileMeasureTest, RefusesBadOptions) {
  auto repo = LoadModelRepository(testing::CommittedRepository());
  ASSERT_TRUE(repo.ok());
  MeasureOptions o;
  o.samples = 0;
  EXPECT_FALSE(MeasureRepositoryProfile(*repo, o).ok());
  o = {};
  o.variants = {"absent"};
  EXPECT_FALSE(MeasureRepositoryProfile(*repo, o).ok());
}

}  // namespace
}  // namespace sloserve

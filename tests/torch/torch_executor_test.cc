// The LibTorch executor on the committed family's smallest variants (pooled_linear,
// mlp_small): real loads, real forward calls, outputs checked against LibTorch called
// directly. This file and torch_executor.cc are the only ones that include torch headers.
#include "sloserve/torch/torch_executor.h"

#include <gtest/gtest.h>
#include <torch/script.h>

#include <filesystem>
#include <fstream>

#include "sloserve/torch/blocking_executor_client.h"
#include "support/temp_dir.h"
#include "torch/torch_test_util.h"

namespace sloserve {
namespace {

using testing::DigitInput;
using testing::FloatsOf;

class TorchExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto repo = LoadModelRepository(testing::CommittedRepository());
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    repo_ = std::move(*repo);
  }

  void Make(const ModelRepository* repo, std::vector<std::string> variants,
            TorchExecutorOptions o = {}) {
    suite_ = testing::DigitsSuite(variants);
    exec_.reset();  // before the sink it posts to
    exec_ = std::make_unique<TorchExecutor>(repo, &suite_, &store_, std::move(o));
    client_ = std::make_unique<BlockingExecutorClient>(exec_.get(), &store_);
  }

  ActionResult Load(VariantId v, WorkerId w = 0) {
    // Seconds(100): the profile's figure, which the executor must not report.
    return client_->Load(w, 0, v, Seconds(100));
  }

  ActionResult Unload(VariantId v, WorkerId w = 0) { return client_->Unload(w, 0, v); }

  // One query per tensor, run as one batch.
  ActionResult Run(VariantId v, std::vector<Tensor> inputs, WorkerId w = 0,
                   TimePoint latest_start = kTimeInfinite) {
    std::vector<TensorSet> sets;
    for (Tensor& t : inputs) sets.push_back({std::move(t)});
    return client_->Run(w, 0, v, std::move(sets), latest_start);
  }

  Tensor Output(PayloadHandle h) {
    TensorSet set = client_->TakeOutput(h);
    EXPECT_EQ(set.size(), 1u);
    return set.empty() ? Tensor{} : set[0];
  }

  // The variant's module called directly on `input`.
  std::vector<float> Direct(const std::string& variant, const Tensor& input) {
    torch::jit::Module m = torch::jit::load(repo_.FindVariant(variant)->model_path);
    m.eval();
    c10::InferenceMode guard;
    std::vector<float> copy = FloatsOf(input);
    at::Tensor x = torch::from_blob(copy.data(), input.shape, torch::kFloat32).clone();
    at::Tensor y = m.forward({x}).toTensor().contiguous();
    return std::vector<float>(y.data_ptr<float>(), y.data_ptr<float>() + y.numel());
  }

  ModelRepository repo_;
  ProfileSuite suite_;
  PayloadStore store_{size_t{64} << 20};
  std::unique_ptr<BlockingExecutorClient> client_;  // the executor's sink: outlives it
  std::unique_ptr<TorchExecutor> exec_;
};

TEST_F(TorchExecutorTest, BatchOutputsEqualADirectForwardCallAndSplitPerQuery) {
  Make(&repo_, {"mlp_small"});
  ASSERT_TRUE(Load(0).status.ok());
  // Three queries of 1, 3 and 2 rows in one batch.
  std::vector<Tensor> inputs = {DigitInput(1, 1), DigitInput(3, 2), DigitInput(2, 3)};
  ActionResult r = Run(0, inputs);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.outputs.size(), 3u);
  // The whole batch equals one direct forward call on the stacked input, bit for bit.
  Tensor stacked = DigitInput(6, 0);
  stacked.data.clear();
  for (const Tensor& t : inputs)
    stacked.data.insert(stacked.data.end(), t.data.begin(), t.data.end());
  const std::vector<float> all = Direct("mlp_small", stacked);
  std::vector<float> got;
  for (size_t i = 0; i < 3; ++i) {
    Tensor y = Output(r.outputs[i]);
    EXPECT_EQ(y.name, "scores");
    EXPECT_EQ(y.datatype, "FP32");
    EXPECT_EQ(y.shape, (std::vector<int64_t>{inputs[i].shape[0], 10})) << i;
    std::vector<float> v = FloatsOf(y);
    // Each query gets its own rows: the module on that query alone gives the same scores.
    std::vector<float> alone = Direct("mlp_small", inputs[i]);
    ASSERT_EQ(v.size(), alone.size()) << i;
    for (size_t k = 0; k < v.size(); ++k) EXPECT_NEAR(v[k], alone[k], 1e-4) << i << "," << k;
    got.insert(got.end(), v.begin(), v.end());
  }
  EXPECT_EQ(got, all);
  EXPECT_EQ(store_.size(), 0u);
}

// Loads are optimised for inference (frozen, oneDNN convolutions): a CNN's scores stay
// those of the module as loaded up to float rounding, at one row and at several.
TEST_F(TorchExecutorTest, AnOptimisedCnnAnswersAsTheModuleAsLoaded) {
  Make(&repo_, {"cnn_small"});
  ASSERT_TRUE(Load(0).status.ok());
  for (int rows : {1, 3}) {
    Tensor in = DigitInput(rows, rows);
    ActionResult r = Run(0, {in});
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    ASSERT_EQ(r.outputs.size(), 1u);
    std::vector<float> got = FloatsOf(Output(r.outputs[0]));
    std::vector<float> want = Direct("cnn_small", in);
    ASSERT_EQ(got.size(), want.size()) << rows;
    for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-4) << rows << "," << k;
  }
  // Frozen weights are graph constants, not parameters: the accounted bytes are still theirs.
  EXPECT_EQ(exec_->ResidentBytes(0), repo_.FindVariant("cnn_small")->memory_bytes);
}

// Issue 35: one row of cnn_large took 5x as long as two (ATen's im2col + reference-BLAS
// convolution for one row, oneDNN's from two). A ratio with a wide margin, not a time:
// the fastest of 10 interleaved runs each, one row under twice two rows (5x before the
// fix, about 0.7x after).
TEST_F(TorchExecutorTest, OneRowOfACnnIsNotSlowerThanTwo) {
  Make(&repo_, {"cnn_large"});
  ASSERT_TRUE(Load(0).status.ok());
  Duration one = Seconds(100), two = Seconds(100);
  for (int i = 0; i < 10; ++i) {
    for (int rows : {1, 2}) {
      ActionResult r = Run(0, {DigitInput(rows, i)});
      ASSERT_TRUE(r.status.ok()) << r.status.ToString();
      for (PayloadHandle h : r.outputs) store_.Release(h);
      Duration& best = rows == 1 ? one : two;
      best = std::min(best, r.end - r.begin);
    }
  }
  EXPECT_LT(one, 2 * two) << "one row " << one.count() << " us, two rows " << two.count() << " us";
}

TEST_F(TorchExecutorTest, LoadTimeIsMeasuredNotTheProfileFigure) {
  TorchExecutorOptions slow;
  slow.warmup_runs = 200;
  Make(&repo_, {"mlp_small", "pooled_linear"}, slow);
  ActionResult a = Load(0);
  ASSERT_TRUE(a.status.ok()) << a.status.ToString();
  EXPECT_GT(a.end, a.begin);
  EXPECT_LT(a.end - a.begin, Seconds(100));  // not LoadVariant::expected
  // Loading what is resident does nothing; its time is not a cold start.
  ActionResult again = Load(0);
  ASSERT_TRUE(again.status.ok());
  EXPECT_LT(again.end - again.begin, a.end - a.begin);
}

TEST_F(TorchExecutorTest, UnloadFreesTheAccountedMemory) {
  Make(&repo_, {"mlp_small", "pooled_linear"});
  EXPECT_EQ(exec_->ResidentBytes(0), 0);
  ASSERT_TRUE(Load(0).status.ok());
  const int64_t mlp = repo_.FindVariant("mlp_small")->memory_bytes;
  const int64_t pooled = repo_.FindVariant("pooled_linear")->memory_bytes;
  ASSERT_GT(mlp, 0);
  EXPECT_EQ(exec_->ResidentBytes(0), mlp);  // measured from the module = the config's
  ASSERT_TRUE(Load(1).status.ok());
  EXPECT_EQ(exec_->ResidentBytes(0), mlp + pooled);
  ASSERT_TRUE(Unload(0).status.ok());
  EXPECT_EQ(exec_->ResidentBytes(0), pooled);
  // An unloaded variant no longer runs.
  ActionResult r = Run(0, {DigitInput(1, 1)});
  EXPECT_EQ(r.status.code(), StatusCode::kFailedPrecondition) << r.status.ToString();
  ASSERT_TRUE(Unload(1).status.ok());
  EXPECT_EQ(exec_->ResidentBytes(0), 0);
}

TEST_F(TorchExecutorTest, ACorruptModelFileFailsItsLoadNamingTheFileAndTheWorkerGoesOn) {
  testing::ScopedTempDir dir("torch-repo");
  namespace fs = std::filesystem;
  fs::create_directories(dir.path() + "/digits/broken");
  fs::copy(repo_.FindVariant("pooled_linear")->dir, dir.path() + "/digits/pooled_linear");
  {
    // pooled_linear's config less its name line (a config's name must match its directory).
    std::ifstream in(repo_.FindVariant("pooled_linear")->dir + "/config.yaml");
    std::ofstream out(dir.path() + "/digits/broken/config.yaml");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("name:", 0) != 0) out << line << "\n";
    }
  }
  { std::ofstream(dir.path() + "/digits/broken/model.pt") << "this is not a TorchScript archive"; }
  auto repo = LoadModelRepository(dir.path());
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  Make(&*repo, {"broken", "pooled_linear"});
  ActionResult bad = Load(0);
  EXPECT_EQ(bad.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find(dir.path() + "/digits/broken/model.pt"), std::string::npos)
      << bad.status.ToString();
  EXPECT_NE(bad.status.message().find("TorchScript"), std::string::npos);
  EXPECT_EQ(exec_->ResidentBytes(0), 0);
  // The same worker loads and runs another variant.
  ASSERT_TRUE(Load(1).status.ok());
  ActionResult r = Run(1, {DigitInput(2, 5)});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(FloatsOf(Output(r.outputs[0])), Direct("pooled_linear", DigitInput(2, 5)));
}

TEST_F(TorchExecutorTest, ABadInputFailsItsBatchWithTheExpectedShapeAndTheWorkerGoesOn) {
  Make(&repo_, {"pooled_linear"});
  ASSERT_TRUE(Load(0).status.ok());
  Tensor wrong = DigitInput(1, 1);
  wrong.shape = {1, 1, 4, 16};
  ActionResult r = Run(0, {DigitInput(1, 2), wrong});
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status.message().find("expects FP32 [-1,1,8,8]"), std::string::npos)
      << r.status.ToString();
  EXPECT_TRUE(r.outputs.empty());
  Tensor misnamed = DigitInput(1, 1, "pixels");
  r = Run(0, {misnamed});
  EXPECT_NE(r.status.message().find("no input named input"), std::string::npos);
  r = Run(0, {DigitInput(1, 3)});
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
  for (PayloadHandle h : r.outputs) store_.Release(h);
  EXPECT_EQ(store_.size(), 0u);
}

TEST_F(TorchExecutorTest, QueriesOfOneBatchMustAgreeBeyondTheBatchDimension) {
  // pooled_linear declared with a variable height: each query passes the declared shape,
  // but one batch stacks only queries of one shape.
  testing::ScopedTempDir dir("torch-repo");
  namespace fs = std::filesystem;
  const std::string variant = dir.path() + "/digits/pooled_linear";
  fs::create_directories(variant);
  fs::copy(repo_.FindVariant("pooled_linear")->model_path, variant + "/model.pt");
  {
    std::ifstream in(repo_.FindVariant("pooled_linear")->dir + "/config.yaml");
    std::ofstream out(variant + "/config.yaml");
    for (std::string line; std::getline(in, line);) {
      if (const size_t at = line.find("[-1, 1, 8, 8]"); at != std::string::npos)
        line.replace(at, 13, "[-1, 1, -1, 8]");
      out << line << "\n";
    }
  }
  auto repo = LoadModelRepository(dir.path());
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  TorchExecutorOptions no_warmup;  // its warm-up input, of height 1, would not pool
  no_warmup.warmup_runs = 0;
  Make(&*repo, {"pooled_linear"}, no_warmup);
  ASSERT_TRUE(Load(0).status.ok());
  Tensor half = DigitInput(1, 1);
  half.shape = {1, 1, 4, 8};
  half.data.resize(half.data.size() / 2);
  ActionResult r = Run(0, {DigitInput(1, 2), half});
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status.message().find("[1,1,4,8], another query of its batch [2,1,8,8]"),
            std::string::npos)
      << r.status.ToString();
  r = Run(0, {DigitInput(1, 2), DigitInput(2, 3)});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  for (PayloadHandle h : r.outputs) store_.Release(h);
  EXPECT_EQ(store_.size(), 0u);
}

TEST_F(TorchExecutorTest, ABatchThatCannotStartInItsWindowIsNotRun) {
  Make(&repo_, {"pooled_linear"});
  ASSERT_TRUE(Load(0).status.ok());
  ActionResult r = Run(0, {DigitInput(1, 1)}, 0, TimePoint(Micros(0)) - Micros(1));
  EXPECT_EQ(r.status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(r.outputs.empty());
}

// A live runtime hands the executor its clock (UseClock): begin/end and the start window
// are then read on it, the engine's timeline, not on a clock of the executor's own.
TEST_F(TorchExecutorTest, TheRuntimesClockTimesItsActions) {
  Make(&repo_, {"pooled_linear"});
  ManualClock clock;
  clock.Set(TimePoint(Seconds(7)));
  exec_->UseClock(&clock);
  ActionResult load = Load(0);
  ASSERT_TRUE(load.status.ok()) << load.status.ToString();
  EXPECT_EQ(load.begin, TimePoint(Seconds(7)));
  EXPECT_EQ(load.end, TimePoint(Seconds(7)));
  ActionResult r = Run(0, {DigitInput(1, 1)}, 0, TimePoint(Seconds(8)));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.begin, TimePoint(Seconds(7)));
  EXPECT_EQ(r.end, TimePoint(Seconds(7)));
  for (PayloadHandle h : r.outputs) store_.Release(h);
  // Its window closed at 6 s of the runtime's clock: not run.
  r = Run(0, {DigitInput(1, 1)}, 0, TimePoint(Seconds(6)));
  EXPECT_EQ(r.status.code(), StatusCode::kDeadlineExceeded);
}

TEST_F(TorchExecutorTest, AVariantMissingFromTheRepositoryFailsItsLoad) {
  Make(&repo_, {"no_such_variant"});
  ActionResult r = Load(0);
  EXPECT_EQ(r.status.code(), StatusCode::kNotFound);
  EXPECT_NE(r.status.message().find("no_such_variant"), std::string::npos);
}

TEST_F(TorchExecutorTest, WorkersAreIndependentAndOversubscriptionIsReported) {
  std::vector<std::string> warnings;
  TorchExecutorOptions o;
  o.machine_cores = 1;
  o.warn = [&](const std::string& m) { warnings.push_back(m); };
  Make(&repo_, {"pooled_linear", "mlp_small"}, o);
  ASSERT_TRUE(Load(0, /*worker=*/0).status.ok());
  EXPECT_TRUE(warnings.empty());
  ASSERT_TRUE(Load(1, /*worker=*/1).status.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("2 cores but the machine has 1"), std::string::npos) << warnings[0];
  EXPECT_EQ(exec_->CoresInUse(), 2);
  EXPECT_EQ(exec_->ResidentBytes(0), repo_.FindVariant("pooled_linear")->memory_bytes);
  EXPECT_EQ(exec_->ResidentBytes(1), repo_.FindVariant("mlp_small")->memory_bytes);
  // Worker 1 has not loaded pooled_linear.
  EXPECT_EQ(Run(0, {DigitInput(1, 1)}, /*worker=*/1).status.code(),
            StatusCode::kFailedPrecondition);
}

TEST(CoreBudgetTest, RefusesOversubscriptionUnlessAllowedThenWarns) {
  std::string warned;
  auto warn = [&](const std::string& m) { warned = m; };
  EXPECT_TRUE(CheckCoreBudget(2, 2, false, warn).ok());
  Status s = CheckCoreBudget(3, 2, false, warn);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("add up to 3 but this machine has 2"), std::string::npos);
  EXPECT_TRUE(warned.empty());
  EXPECT_TRUE(CheckCoreBudget(3, 2, true, warn).ok());
  EXPECT_NE(warned.find("oversubscribe"), std::string::npos);
}

}  // namespace
}  // namespace sloserve

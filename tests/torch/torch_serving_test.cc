// Real models end to end: the engine runtime with the LibTorch executor behind a real HTTP
// server on 127.0.0.1, and the load generator sending the committed held-out set. The
// accuracy measured from the responses must equal the variant's held-out accuracy exactly
// (every sample sent once, one variant), and each response carries the scores.
#include <gtest/gtest.h>

#include "sloserve/loadgen/labelled_dataset.h"
#include "sloserve/loadgen/load_generator.h"
#include "sloserve/runtime/engine_runtime.h"
#include "sloserve/server/http_server.h"
#include "sloserve/torch/torch_executor.h"
#include "torch/torch_test_util.h"

namespace sloserve {
namespace {

TEST(TorchServingTest, LiveAccuracyFromResponsesEqualsTheHeldOutAccuracy) {
  auto repo = LoadModelRepository(testing::CommittedRepository());
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  const RepoVariant* variant = repo->FindVariant("pooled_linear");
  ASSERT_NE(variant, nullptr);
  auto data = LoadLabelledDataset(repo->FindTask("digits")->dir + "/heldout.json");
  ASSERT_TRUE(data.ok()) << data.status().ToString();

  ProfileSuite suite = testing::DigitsSuite({"pooled_linear"});
  RuntimeOptions o;
  o.deployment.workers = 1;
  o.deployment.slo = Seconds(10);
  o.policy.options["variant"] = "pooled_linear";
  TorchExecutor* exec = nullptr;
  o.make_executor = [&](const ProfileSuite& s, PayloadStore* store) {
    auto e = std::make_unique<TorchExecutor>(&*repo, &s, store);
    exec = e.get();
    return std::unique_ptr<WorkerExecutor>(std::move(e));
  };
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  ASSERT_NE(exec, nullptr);
  // The engine starts with the variant resident: load it for real first (as serve does).
  ASSERT_TRUE(exec->Preload(0, 0, 0).ok());
  (*rt)->Start();
  HttpServer::Options http;
  http.port = 0;
  auto server = HttpServer::Create(http, rt->get());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto port = (*server)->Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();

  LoadOptions load;
  load.port = *port;
  load.task = "digits";
  load.connections = 4;
  load.max_connections = 8;
  load.shape = {1, 1, 8, 8};
  load.dataset_inputs = data->inputs;
  load.dataset_labels = data->labels;
  for (size_t i = 0; i < data->inputs.size(); ++i) load.schedule.push_back(Micros(500 * i));
  auto report = RunLoad(load);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  (*server)->Stop();
  (*rt)->Stop();

  const int64_t n = static_cast<int64_t>(data->inputs.size());
  EXPECT_EQ(report->ok, n);
  EXPECT_EQ(report->labelled, n);
  EXPECT_EQ(report->variant_counts.at("pooled_linear"), n);
  // The training script's held-out accuracy (2 decimals) = correct / n.
  EXPECT_NEAR(100.0 * static_cast<double>(report->correct) / static_cast<double>(n),
              variant->accuracy, 0.01);
  EXPECT_EQ(report->ToJson().at("labelled").get<int64_t>(), n);
}

}  // namespace
}  // namespace sloserve

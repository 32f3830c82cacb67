// End-to-end (issue 31, "Done when"): `sloserve serve` on a suite of several models answers
// /v2/models/NAME/infer for every model from one pool, lists them at GET /v2/models, and
// `sloserve loadgen --models` drives several at once with a report per model (field
// `model`) and totals — real processes on 127.0.0.1. The suite is the embedded
// kairos-recsys (five recommendation models, each profiled on r5n.large). Counts are
// asserted, never times.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "e2e/sloserve_paths.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sloserve {
// Named, not anonymous: e2e_test compiles its files as one unity batch.
namespace multi_model_cli_e2e_test {

using json = nlohmann::json;
using testing::kBin;
using testing::RunProcess;
using testing::Subprocess;

std::string WriteMultiModelConfig() {
  const std::string path =
      ::testing::TempDir() + "/multi_model_cli_e2e_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << "suite: kairos-recsys\n"
                         "task: rm2\n"
                         "hardware: r5n.large\n"
                         "workers: 4\n"
                         "seed: 1\n"
                         "executor: {latency: sample}\n"
                         "policy: {selection: fixed, batching: edf}\n";
  return path;
}

TEST(MultiModelCliE2eTest, ServeAnswersEveryModelAndLoadgenDrivesSeveral) {
  // Admission off: the engine's admission estimates service times from the deployment's
  // task (rm2), which refuses the models with shorter SLOs (ncf 5 ms, dien 35 ms) even
  // when idle; per-model admission is the engine's part of issue 31.
  Subprocess server({kBin, "serve", WriteMultiModelConfig(), "--port", "0", "--threads", "1",
                     "--duration", "120", "--set", "engine.admission=off"});
  ASSERT_TRUE(server.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << server.err();
  EXPECT_NE(server.err().find("5 models (ncf, rm2, wnd, mtwnd, dien), task rm2"), std::string::npos)
      << server.err();
  const uint16_t port = testing::ListenPort(server.err());

  const json list = json::parse(testing::HttpGetBody(port, "/v2/models"), nullptr, false);
  ASSERT_TRUE(list.is_object()) << "no JSON from GET /v2/models";
  std::set<std::string> names;
  for (const json& m : list["models"]) names.insert(m["name"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"dien", "mtwnd", "ncf", "rm2", "wnd"}));
  for (const std::string& model : names) {
    const json out = json::parse(
        testing::HttpPostBody(
            port, "/v2/models/" + model + "/infer",
            R"({"inputs":[{"name":"features","datatype":"FP32","shape":[1,1],"data":[0]}]})"),
        nullptr, false);
    ASSERT_TRUE(out.is_object()) << model;
    EXPECT_EQ(out.value("model_name", ""), model) << out;
    EXPECT_EQ(out["parameters"].value("variant", ""), model) << out;  // one variant each
  }

  // Three models at once: 50%, 30% and 20% of 40 qps for 2 s.
  auto load = RunProcess({kBin, "loadgen", "--port", std::to_string(port), "--models",
                          "rm2:0.5,ncf:0.3,wnd:0.2", "--qps", "40", "--duration", "2", "--json"});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const json report = json::parse(load.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << load.out;
  ASSERT_EQ(report["models"].size(), 3u) << load.out;
  int64_t sent = 0;
  const std::vector<std::string> order = {"rm2", "ncf", "wnd"};
  for (size_t i = 0; i < order.size(); ++i) {
    const json& row = report["models"][i];
    SCOPED_TRACE(order[i]);
    EXPECT_EQ(row["model"], order[i]);
    EXPECT_GT(row["sent"].get<int64_t>(), 0);
    EXPECT_EQ(row["ok"], row["sent"]) << row;
    // Each model's requests were answered by that model's variant, none by another's.
    ASSERT_EQ(row["variant_counts"].size(), 1u) << row;
    EXPECT_EQ(row["variant_counts"][order[i]], row["ok"]);
    sent += row["sent"].get<int64_t>();
  }
  EXPECT_DOUBLE_EQ(report["models"][0]["share"].get<double>(), 0.5);
  EXPECT_EQ(report["total"]["model"], "total");
  EXPECT_EQ(report["total"]["sent"].get<int64_t>(), sent);
  EXPECT_EQ(report["total"]["ok"].get<int64_t>(), sent);

  // --model a,b: equal shares, the text report a block per model and the totals.
  auto text = RunProcess({kBin, "loadgen", "--port", std::to_string(port), "--model", "dien,mtwnd",
                          "--qps", "20", "--duration", "1"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("== model dien (share 0.50)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("== model mtwnd (share 0.50)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("== total (2 models)"), std::string::npos) << text.out;

  // An unknown model is named with the closest served one.
  const std::string unknown = testing::HttpGetBody(port, "/v2/models/rm3");
  EXPECT_NE(unknown.find("unknown model 'rm3' (did you mean 'rm2'?"), std::string::npos) << unknown;
  // The request counters carry each model and its answering variant.
  const std::string metrics = testing::HttpGetBody(port, "/metrics");
  EXPECT_NE(metrics.find("sloserve_requests_total{model=\"wnd\",outcome=\"met\",reason=\"none\","
                         "variant=\"wnd\",slo_class=\"25\"}"),
            std::string::npos)
      << metrics;
  auto bad = RunProcess({kBin, "loadgen", "--port", std::to_string(port), "--models", "rm2:x"});
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("expected MODEL:SHARE"), std::string::npos) << bad.err;
}

// Issue 32: `sloserve sim --json` of models from three suites — the run's embedded image
// suite, the embedded recommendation suite and an ORLOJ suite by a path next to the
// config — on a pool of their three hardware types, with stated prices: a total row and
// one row per model, each naming its suite.
TEST(MultiModelCliE2eTest, SimOfModelsFromThreeSuitesHasARowPerModel) {
  testing::ScopedTempDir dir("three-suites");
  std::filesystem::copy_file(testing::kRoot + "/experiments/orloj/profiles/modes1.prof",
                             dir.File("modes1.prof"));
  const std::string config = dir.File("three.yaml");
  std::ofstream(config) << "name: three-suites\n"
                           "suite: ramsis-image\n"
                           "hardware: \"n1-4cpu:2,r5n.large:2,v100:2\"\n"
                           "workers_per_machine: 2\n"
                           "duration_s: 5\n"
                           "workload: {arrival: poisson, load_qps: 12}\n"
                           "hardware_prices: {v100: 3.06}\n"
                           "policy: {dispatch: shared}\n"
                           "models:\n"
                           "  - {name: image, variants: resnet18, slo_ms: 300}\n"
                           "  - {name: rec, suite: kairos-recsys, task: rm2, slo_ms: 400}\n"
                           "  - {name: dyn, suite: modes1.prof, slo_ms: 2000}\n";
  auto r = RunProcess({kBin, "sim", config, "--json", "--no-progress"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out;
  const json& rows = out["rows"];
  ASSERT_EQ(rows.size(), 4u) << r.out;
  EXPECT_EQ(rows[0]["model"], "all");
  EXPECT_EQ(rows[0]["suite"], "ramsis-image+kairos-recsys+" + dir.File("modes1.prof"));
  EXPECT_NEAR(rows[0]["cost_per_hour"].get<double>(), 2 * 0.19 + 2 * 0.149 + 2 * 3.06, 1e-9);
  const std::vector<std::pair<std::string, std::string>> models = {
      {"image", "ramsis-image"}, {"rec", "kairos-recsys"}, {"dyn", dir.File("modes1.prof")}};
  int64_t arrived = 0;
  for (size_t i = 0; i < models.size(); ++i) {
    const json& row = rows[i + 1];
    SCOPED_TRACE(models[i].first);
    EXPECT_EQ(row["model"], models[i].first);
    EXPECT_EQ(row["suite"], models[i].second);
    EXPECT_GT(row["arrived"].get<int64_t>(), 0);
    EXPECT_EQ(row["completed"], row["arrived"]);
    arrived += row["arrived"].get<int64_t>();
  }
  EXPECT_EQ(rows[0]["arrived"].get<int64_t>(), arrived);
}

}  // namespace multi_model_cli_e2e_test
}  // namespace sloserve

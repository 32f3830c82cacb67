// End-to-end: a LibTorch model repository's task as one model of a `models:` list
// (models[i].repository, docs/torch.md "In a composed deployment"): one `serve` run where
// an emulated model and the committed digits model share the pool, the digits answers
// being the real model's, in serve's process and on two `sloserve worker`s; and the
// errors of bad combinations. Only in builds with LibTorch.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e/sloserve_paths.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

using testing::kBin;
using testing::kRoot;
using testing::RunProcess;
using testing::Subprocess;

// recsys (kairos-recsys, emulated) on a c5n.2xlarge, digits (cnn_large, LibTorch) on one
// core of this machine (its profile's local-1c). Digits' SLO is 5 s, not the profile's
// 50 ms: under ASan one cnn_large row takes several ms, and the test sends 270/s; no
// request may be dropped for its SLO (it checks every answer).
std::string MixedConfig(const std::string& digits_extra = "") {
  return "hardware: \"c5n.2xlarge:1,local-1c:1\"\n"
         "engine: {admission: off}\n"
         "policy: {dispatch: jsq, batching: edf, selection: fixed}\n"
         "models:\n"
         "  - {name: recsys, suite: kairos-recsys, task: rm2, slo_ms: 350}\n"
         "  - {name: digits, repository: " +
         kRoot + "/models, variants: cnn_large, slo_ms: 5000" + digits_extra + "}\n";
}

std::string Write(const testing::ScopedTempDir& dir, const std::string& name,
                  const std::string& text) {
  const std::string path = dir.File(name);
  std::ofstream(path) << text;
  return path;
}

nlohmann::json Heldout() {
  std::ifstream in(kRoot + "/models/digits/heldout.json");
  return nlohmann::json::parse(in);
}

std::string DigitsRequest(const nlohmann::json& sample) {
  nlohmann::json request;
  request["inputs"] = {
      {{"name", "input"}, {"shape", {1, 1, 8, 8}}, {"datatype", "FP32"}, {"data", sample["data"]}}};
  return request.dump();
}

nlohmann::json Post(uint16_t port, const std::string& model, const std::string& body) {
  return nlohmann::json::parse(testing::HttpPostBody(port, "/v2/models/" + model + "/infer", body),
                               nullptr, false);
}

// The measured accuracy of a variant in the committed profile (`variant NAME TASK ACC ...`).
double ProfiledAccuracy(const std::string& variant) {
  std::ifstream in(kRoot + "/models/digits/profile.prof");
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line);
    std::string kind, name, task;
    double accuracy = -1;
    if (s >> kind >> name >> task >> accuracy && kind == "variant" && name == variant)
      return accuracy;
  }
  return -1;
}

// The reference: the digits repository served alone (its single-model path, whose
// outputs tests/torch checks against direct LibTorch calls), variant cnn_large, for the
// first `rows` held-out samples.
void ScoresServedAlone(const nlohmann::json& heldout, int rows, std::vector<nlohmann::json>* out) {
  Subprocess alone({kBin, "serve", "--model-repository", kRoot + "/models", "--port", "0", "--set",
                    "policy.selection=fixed", "--set", "policy.variant=cnn_large"});
  ASSERT_TRUE(alone.WaitForStderr("sloserve: ready", std::chrono::seconds(120))) << alone.err();
  const uint16_t port = testing::ListenPort(alone.err());
  for (int i = 0; i < rows; ++i) {
    const nlohmann::json r = Post(port, "digits", DigitsRequest(heldout["samples"][i]));
    ASSERT_TRUE(r.is_object() && r.contains("outputs")) << r.dump();
    out->push_back(r["outputs"][0]["data"]);
  }
}

// The emulated model answers from its profile, on its own hardware; the digits model with
// the real model's scores: bit for bit `expected` (the repository served alone), on
// local-1c.
void ExpectBothModelsAnswer(uint16_t port, const nlohmann::json& heldout,
                            const std::vector<nlohmann::json>& expected) {
  nlohmann::json features;
  features["inputs"] = {{{"name", "features"},
                         {"shape", {1, 4}},
                         {"datatype", "FP32"},
                         {"data", {0.5, 1.0, 1.5, 2.0}}}};
  const nlohmann::json recsys = Post(port, "recsys", features.dump());
  ASSERT_TRUE(recsys.is_object() && recsys.contains("parameters")) << recsys.dump();
  EXPECT_EQ(recsys["parameters"]["variant"], "recsys/rm2") << recsys.dump();
  EXPECT_EQ(recsys["parameters"]["hardware"], "c5n.2xlarge") << recsys.dump();
  for (size_t i = 0; i < expected.size(); ++i) {
    const nlohmann::json r = Post(port, "digits", DigitsRequest(heldout["samples"][i]));
    ASSERT_TRUE(r.is_object() && r.contains("outputs")) << r.dump();
    EXPECT_EQ(r["parameters"]["variant"], "digits/cnn_large");
    EXPECT_EQ(r["parameters"]["hardware"], "local-1c");
    EXPECT_EQ(r["outputs"][0]["name"], "scores");
    EXPECT_EQ(r["outputs"][0]["data"], expected[i]) << "heldout row " << i;
  }
}

TEST(RepositoryModelE2eTest, AnEmulatedModelAndTheDigitsModelServeFromOnePool) {
  testing::ScopedTempDir dir;
  const std::string config = Write(dir, "mixed.yaml", MixedConfig());
  const nlohmann::json heldout = Heldout();
  std::vector<nlohmann::json> expected;
  ASSERT_NO_FATAL_FAILURE(ScoresServedAlone(heldout, 8, &expected));

  Subprocess server({kBin, "serve", config, "--port", "0"});
  ASSERT_TRUE(server.WaitForStderr("sloserve: ready", std::chrono::seconds(120))) << server.err();
  const uint16_t port = testing::ListenPort(server.err());
  // Only the LibTorch model's worker loads anything for real.
  EXPECT_NE(server.err().find("loaded (cold starts measured): cnn_large"), std::string::npos)
      << server.err();
  ASSERT_NO_FATAL_FAILURE(ExpectBothModelsAnswer(port, heldout, expected));

  // Every held-out sample once (constant arrivals, one per sample): the accuracy measured
  // from the answers is the one `profile measure` measured for the variant.
  const size_t samples = heldout["samples"].size();
  auto labelled = RunProcess({kBin, "loadgen", "--port", std::to_string(port), "--model", "digits",
                              "--dataset", kRoot + "/models/digits/heldout.json", "--arrival",
                              "constant", "--qps", "270", "--duration",
                              std::to_string((samples + 0.5) / 270), "--timeout", "60", "--json"});
  ASSERT_EQ(labelled.exit_code, 0) << labelled.err;
  const auto report = nlohmann::json::parse(labelled.out);
  ASSERT_EQ(report["ok"].get<size_t>(), samples) << labelled.out;
  ASSERT_EQ(report["labelled"].get<size_t>(), samples) << labelled.out;
  EXPECT_NEAR(report["accuracy_measured"].get<double>(), ProfiledAccuracy("cnn_large"), 1e-6)
      << labelled.out;
}

TEST(RepositoryModelE2eTest, SimSchedulesWithTheRepositorysProfile) {
  testing::ScopedTempDir dir;
  const std::string config = Write(dir, "sim.yaml",
                                   MixedConfig(", workload: {arrival: poisson, load_qps: 100}") +
                                       "duration_s: 5\n"
                                       "workload: {arrival: poisson, load_qps: 20}\n");
  // The config's workload goes to recsys (digits has its own).
  auto sim = RunProcess({kBin, "sim", config, "--json", "--no-progress"});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto rows = nlohmann::json::parse(sim.out)["rows"];
  bool digits = false;
  for (const auto& r : rows) {
    if (r.value("model", "") != "digits") continue;
    digits = true;
    EXPECT_GT(r["arrived"].get<int>(), 0) << r.dump();
    EXPECT_EQ(r["met"], r["arrived"]) << r.dump();
  }
  EXPECT_TRUE(digits) << sim.out;
}

// The same pool on two `sloserve worker` processes given the same config: the worker of
// local-1c runs digits with LibTorch and loads it for real at start, the other emulates
// recsys; the answers are as in serve's own process.
TEST(RepositoryModelE2eTest, RemoteWorkersRunTheDigitsModelBesideAnEmulatedOne) {
  testing::ScopedTempDir dir;
  const std::string config = Write(dir, "mixed.yaml", MixedConfig());
  const nlohmann::json heldout = Heldout();
  std::vector<nlohmann::json> expected;
  ASSERT_NO_FATAL_FAILURE(ScoresServedAlone(heldout, 8, &expected));

  std::vector<std::unique_ptr<Subprocess>> workers;
  std::vector<std::string> serve_argv = {kBin, "serve", config, "--port", "0"};
  for (int i = 0; i < 2; ++i) {
    workers.push_back(std::make_unique<Subprocess>(std::vector<std::string>{
        kBin, "worker", config, "--listen", "127.0.0.1:0", "--duration", "120"}));
    ASSERT_TRUE(workers.back()->WaitForStderr("listening on grpc://", std::chrono::seconds(60)))
        << workers.back()->err();
    EXPECT_NE(workers.back()->err().find("emulated+torch executor"), std::string::npos)
        << workers.back()->err();
    const uint16_t p = testing::PortAfter(workers.back()->err(), "grpc://127.0.0.1:");
    ASSERT_NE(p, 0) << workers.back()->err();
    serve_argv.insert(serve_argv.end(), {"--remote-worker", "127.0.0.1:" + std::to_string(p)});
  }
  Subprocess server(serve_argv);
  ASSERT_TRUE(server.WaitForStderr("sloserve: ready", std::chrono::seconds(120))) << server.err();
  // Each worker starts with its own model resident: w1 (local-1c) digits, w0 recsys.
  for (const auto& [w, variant] :
       {std::pair<int, std::string>{0, "recsys/rm2"}, {1, "digits/cnn_large"}}) {
    const std::string port =
        std::to_string(testing::PortAfter(workers[w]->err(), "grpc://127.0.0.1:"));
    EXPECT_NE(server.err().find("w" + std::to_string(w) + " (127.0.0.1:" + port +
                                ") loaded the variants resident at start: " + variant),
              std::string::npos)
        << server.err();
  }
  ASSERT_NO_FATAL_FAILURE(
      ExpectBothModelsAnswer(testing::ListenPort(server.err()), heldout, expected));
}

TEST(RepositoryModelE2eTest, BadCombinationsAreNamed) {
  testing::ScopedTempDir dir;
  auto expect_error = [&](const std::vector<std::string>& argv, const std::string& needle) {
    auto r = RunProcess(argv);
    EXPECT_NE(r.exit_code, 0) << needle;
    // `config check` lists its findings on stdout, the others say it on stderr.
    EXPECT_NE((r.out + r.err).find(needle), std::string::npos) << r.out << r.err;
  };
  // A task the repository does not have: config check, sim and serve all say so.
  std::string missing = MixedConfig();
  missing.replace(missing.find("name: digits,"), 13, "name: digitz,");
  const std::string missing_path = Write(dir, "missing.yaml", missing);
  expect_error({kBin, "config", "check", missing_path}, "has no task 'digitz'");
  expect_error({kBin, "serve", missing_path, "--port", "0"}, "has no task 'digitz'");
  // A repository beside a suite, and copies of one.
  expect_error(
      {kBin, "config", "check", Write(dir, "suite.yaml", MixedConfig(", suite: ramsis-image"))},
      "takes its suite from it");
  expect_error({kBin, "config", "check", Write(dir, "copies.yaml", MixedConfig(", copies: 2"))},
               "copies must be 1");
  // --model-repository replaces the suite; with models: it is refused, naming the key.
  const std::string mixed = Write(dir, "mixed.yaml", MixedConfig());
  expect_error({kBin, "serve", mixed, "--model-repository", kRoot + "/models", "--port", "0"},
               "models[i].repository");
  // LibTorch models run in serve's own process or on `sloserve worker`s, not on any KServe
  // server.
  expect_error({kBin, "serve", mixed, "--port", "0", "--set", "server.kserve_workers=127.0.0.1:1"},
               "server.kserve_workers with a model from a repository");
  // A worker takes a config's models or --model-repository, not both.
  expect_error(
      {kBin, "worker", mixed, "--listen", "127.0.0.1:0", "--model-repository", kRoot + "/models"},
      "--model-repository with a config that lists models");
  // Without the LibTorch plugin: the model is named, and so is what is missing.
  auto no_plugin =
      RunProcess({"/usr/bin/env", "SLOSERVE_TORCH_PLUGIN=/nonexistent/libsloserve_torch.so", kBin,
                  "serve", mixed, "--port", "0"});
  EXPECT_EQ(no_plugin.exit_code, 1) << no_plugin.err;
  EXPECT_NE(no_plugin.err.find("'models[1].repository': the LibTorch plugin"), std::string::npos)
      << no_plugin.err;
}

}  // namespace
}  // namespace sloserve

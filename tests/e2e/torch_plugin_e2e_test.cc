// End-to-end: the real-model paths of the sloserve binary, which reach LibTorch through
// the plugin it loads on first use (apps/sloserve/torch_plugin_api.h). Only in builds
// with LibTorch.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e/sloserve_paths.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/subprocess.h"

namespace sloserve {
namespace {

using testing::RunProcess;
using testing::Subprocess;

using testing::kBin;
using testing::kRoot;

// serve --model-repository loads the committed digits family through the plugin and a
// request is answered by a TorchScript variant.
TEST(TorchPluginE2eTest, ServeAModelRepositoryAnswersThroughLibTorch) {
  Subprocess server({kBin, "serve", "--model-repository", kRoot + "/models", "--port", "0", "--set",
                     "policy.selection=fixed", "--set", "policy.variant=pooled_linear"});
  // Ready once the workers have loaded their variants (it listens before that).
  ASSERT_TRUE(server.WaitForStderr("sloserve: ready", std::chrono::seconds(120))) << server.err();
  const uint16_t port = testing::ListenPort(server.err());
  nlohmann::json request;
  request["inputs"] = {{{"name", "input"}, {"shape", {1, 1, 8, 8}}, {"datatype", "FP32"}}};
  for (int i = 0; i < 64; ++i) request["inputs"][0]["data"].push_back(i % 17);
  const auto response = nlohmann::json::parse(
      testing::HttpPostBody(port, "/v2/models/digits/infer", request.dump()), nullptr, false);
  ASSERT_TRUE(response.is_object()) << server.err();
  ASSERT_TRUE(response.contains("outputs")) << response.dump();
  EXPECT_EQ(response["outputs"][0]["name"], "scores");
  EXPECT_EQ(response["outputs"][0]["data"].size(), 10u) << response.dump();
  EXPECT_EQ(response["parameters"]["variant"], "pooled_linear");
  // The measured cold starts come from the executor in the plugin.
  EXPECT_NE(server.err().find("cold starts measured"), std::string::npos) << server.err();
}

// The LSTM forecaster is registered by the executable and built by the plugin: it knows
// the seconds it was trained on (read from the TorchScript file) and scores a later range.
TEST(TorchPluginE2eTest, ForecastEvalScoresTheLstm) {
  const std::string window = kRoot + "/profiles/traces/twitter_rps_day15_82-103min.txt";
  const std::vector<std::string> eval = {kBin,
                                         "forecast",
                                         "eval",
                                         "--forecasters",
                                         "lstm,last_value",
                                         "--lstm-model",
                                         kRoot + "/models/forecast/twitter_lstm.pt",
                                         "--json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = eval;
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunProcess(argv);
  };
  // Placed at the dataset's second 0, the window overlaps the training days.
  auto overlap = with({"--trace", window, "--trace-offset-s", "0"});
  EXPECT_EQ(overlap.exit_code, 1) << overlap.err;
  EXPECT_NE(overlap.err.find("trained on [0, 1209600)"), std::string::npos) << overlap.err;
  // By default its provenance header places it at day 15 (seconds [1300920, 1302180) of the
  // dataset): held out, scored.
  auto day15 = with({"--trace", window});
  EXPECT_EQ(day15.exit_code, 0) << day15.err;

  // The window placed after the training days (zeros before it).
  const std::string shifted = ::testing::TempDir() + "/lstm_window_" + std::to_string(getpid());
  {
    std::ifstream in(window);
    std::ofstream out(shifted);
    for (int s = 0; s < 1209600; ++s) out << "0\n";
    out << in.rdbuf();
  }
  auto r = with({"--trace", shifted, "--start-s", "1209600"});
  std::filesystem::remove(shifted);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u) << r.out;
  EXPECT_EQ(j["rows"][0]["forecaster"], "lstm");
  EXPECT_GT(j["rows"][0]["windows"].get<int>(), 0) << r.out;
  EXPECT_GT(j["rows"][0]["mean_forecast_rps"].get<double>(), 0) << r.out;
}

// Without the plugin the real-model paths fail with one line saying what is missing; the
// rest of the binary does not need it.
TEST(TorchPluginE2eTest, AMissingPluginIsNamed) {
  const std::string missing = "SLOSERVE_TORCH_PLUGIN=/nonexistent/libsloserve_torch.so";
  auto serve = RunProcess({"/usr/bin/env", missing, kBin, "serve", "--model-repository",
                           kRoot + "/models", "--port", "0"});
  EXPECT_EQ(serve.exit_code, 1) << serve.err;
  EXPECT_NE(serve.err.find("LibTorch plugin"), std::string::npos) << serve.err;
  EXPECT_NE(serve.err.find("/nonexistent/libsloserve_torch.so"), std::string::npos) << serve.err;
  auto measure = RunProcess({"/usr/bin/env", missing, kBin, "profile", "measure",
                             "--model-repository", kRoot + "/models"});
  EXPECT_EQ(measure.exit_code, 1) << measure.err;
  EXPECT_NE(measure.err.find("LibTorch plugin"), std::string::npos) << measure.err;
  auto sim = RunProcess({"/usr/bin/env", missing, kBin, "profile", "show", "ramsis-text"});
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
}

}  // namespace
}  // namespace sloserve

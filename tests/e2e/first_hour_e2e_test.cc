// End-to-end: what a new user meets first, with the real binary. It knows its version,
// runs from any directory after being copied away from the build tree, serve binds at
// once and answers with the fastest variant while it generates its policy set, and the demo shows
// variants switching with load.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
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

// `cd DIR && [ENV] BIN ARGS...` through /bin/sh (arguments here have no quotes).
testing::ProcessResult RunIn(const std::string& dir, const std::string& command) {
  return RunProcess({"/bin/sh", "-c", "cd '" + dir + "' && " + command});
}

std::string FreshDir(const std::string& name) {
  const std::string dir =
      ::testing::TempDir() + "/first_hour_" + name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(FirstHourE2eTest, VersionNamesTheRelease) {
  auto r = RunProcess({kBin, "--version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // "sloserve X.Y.Z (git REV)\n"
  int major = -1, minor = -1, patch = -1;
  char rev[64] = {};
  ASSERT_EQ(
      std::sscanf(r.out.c_str(), "sloserve %d.%d.%d (git %63[^ )])", &major, &minor, &patch, rev),
      4)
      << r.out;
  EXPECT_GE(major, 0);
  EXPECT_GE(minor, 0);
  EXPECT_GE(patch, 0);
  const size_t first_end = r.out.find('\n');
  ASSERT_NE(first_end, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(first_end - 1, 2), ")\n") << r.out;
  // Then its malloc, on a second and last line (jemalloc in the non-sanitizer builds).
  const std::string second = r.out.substr(first_end + 1);
  EXPECT_EQ(second.find('\n'), second.size() - 1) << r.out;
  EXPECT_EQ(
      second.rfind(SLOSERVE_EXPECT_JEMALLOC ? "malloc: jemalloc 5." : "malloc: the C library's", 0),
      0u)
      << r.out;
}

// Suites and traces are compiled in, and paths in a config resolve against the config's
// folder: a copy of the binary works from an unrelated working directory.
TEST(FirstHourE2eTest, ACopiedBinaryRunsFromAnyDirectory) {
  const std::string dir = FreshDir("copy");
  const std::string bin = dir + "/sloserve";
  std::filesystem::copy_file(kBin, bin);
  std::filesystem::permissions(bin, std::filesystem::perms::owner_all);

  auto show = RunIn("/", "env -u SLOSERVE_PROFILES_DIR " + bin + " profile show ramsis-text");
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("bert"), std::string::npos) << show.out;
  // A trace named by the config is found inside the binary (its first 10 s: the point is
  // where the file comes from, and the whole trace takes a minute under ASan).
  auto trace = RunIn("/", bin + " sim " + kRoot +
                              "/experiments/foundation/twitter_trace.yaml --set duration_s=10 "
                              "--json --no-progress");
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  EXPECT_FALSE(nlohmann::json::parse(trace.out)["rows"].empty());
  // `suite: profiles/modes1.prof` is relative to experiments/orloj/, not to the cwd.
  auto relative = RunIn("/", bin + " sim " + kRoot +
                                 "/experiments/orloj/fig8_modes1.yaml --set duration_s=2 "
                                 "--set load_qps=100 --json --no-progress");
  EXPECT_EQ(relative.exit_code, 0) << relative.err;
  auto unknown = RunIn("/", bin + " profile show ramsis-imag");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("embedded suites: "), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("ramsis-image"), std::string::npos) << unknown.err;
  std::filesystem::remove_all(dir);
}

// A RAMSIS deployment without a cached policy set takes minutes to start: the port
// answers at once, readiness says what is being done, and Ctrl-C does not wait for it.
// One image inference through /v2/models/image/infer; the answer's parameters.
nlohmann::json InferImage(uint16_t port) {
  nlohmann::json request = {{"inputs",
                             {{{"name", "input"},
                               {"shape", {1, 16}},
                               {"datatype", "FP32"},
                               {"data", std::vector<float>(16, 1.0f)}}}}};
  const auto answer = nlohmann::json::parse(
      testing::HttpPostBody(port, "/v2/models/image/infer", request.dump()), nullptr, false);
  return answer.is_object() ? answer.value("parameters", nlohmann::json::object())
                            : nlohmann::json::object();
}

// Policy-set files in a cache dir: everything but `profiles/`, where the profile suites'
// parsed copies are kept (written whenever a suite is loaded, generation or not).
int PolicySetFiles(const std::string& cache) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache)) {
    if (entry.path().filename() != "profiles") ++n;
  }
  return n;
}

nlohmann::json Readiness(uint16_t port) {
  return nlohmann::json::parse(testing::HttpGetBody(port, "/v2/health/ready"), nullptr,
                               /*allow_exceptions=*/false);
}

// The whole image set from an empty cache takes tens of seconds: serve binds at once,
// answers with the fastest variant meanwhile and says so, and a stop cancels the
// generation (no set is written) instead of waiting for it.
TEST(FirstHourE2eTest, ServeAnswersWithTheFastestVariantWhileItGeneratesItsPolicySet) {
  const std::string cache = FreshDir("cache");
  Subprocess server({"/usr/bin/env", "SLOSERVE_CACHE_DIR=" + cache, kBin, "serve", "--port", "0",
                     "--duration", "600", "--set", "slo_ms=149"});  // no shipped set for 149
  ASSERT_TRUE(server.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << server.err();
  const uint16_t port = testing::ListenPort(server.err());
  ASSERT_NE(port, 0) << server.err();
  const auto ready = Readiness(port);
  ASSERT_TRUE(ready.is_object()) << "no JSON from /v2/health/ready";
  const std::string degraded = ready.value("degraded", "");
  EXPECT_NE(degraded.find("serving the fastest variant (shufflenet_v2_x0_5)"), std::string::npos)
      << ready.dump();
  EXPECT_FALSE(testing::HttpGetBody(port, "/v2/models/image").empty());  // metadata served
  const auto answer = InferImage(port);
  EXPECT_EQ(answer.value("variant", ""), "shufflenet_v2_x0_5") << answer.dump();
  server.Signal(SIGTERM);
  auto done = server.Wait();
  EXPECT_EQ(done.exit_code, 0) << done.err;
  EXPECT_NE(done.err.find("stopping"), std::string::npos) << done.err;
  EXPECT_EQ(PolicySetFiles(cache), 0) << "the generation was not cancelled";
  std::filesystem::remove_all(cache);
}

// A small load range generates in about a second: readiness drops its note and the
// policy set decides (at low load a more accurate variant than the fastest).
TEST(FirstHourE2eTest, ServeSwitchesToThePolicySetOnceGenerated) {
  const std::string cache = FreshDir("small_cache");
  Subprocess server({"/usr/bin/env", "SLOSERVE_CACHE_DIR=" + cache, kBin, "serve", "--port", "0",
                     "--duration", "600", "--set", "slo_ms=149", "--set", "policy.min_qps=40",
                     "--set", "policy.max_qps=200"});
  ASSERT_TRUE(server.WaitForStderr("no longer degraded", std::chrono::seconds(120)))
      << server.err();
  const uint16_t port = testing::ListenPort(server.err());
  ASSERT_NE(port, 0) << server.err();
  const auto ready = Readiness(port);
  EXPECT_EQ(ready, nlohmann::json({{"ready", true}})) << ready.dump();
  const auto answer = InferImage(port);
  EXPECT_FALSE(answer.value("variant", "").empty()) << answer.dump();
  EXPECT_NE(answer.value("variant", ""), "shufflenet_v2_x0_5") << answer.dump();
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait().exit_code, 0);
  EXPECT_GT(PolicySetFiles(cache), 0) << "the generated set was not cached";
  std::filesystem::remove_all(cache);
}

// The default serve (RAMSIS, which forms batches of 1 when the queue is short) answers a
// batched request whole, states its row limit as max_batch_size (9 rows: the most any
// image variant finishes within 150 ms at p95, shufflenet_v2_x0_5), refuses a request
// over it as a bad request naming the limit, and its summary counts that refusal apart
// from SLO violations.
TEST(FirstHourE2eTest, DefaultServeAnswersABatchedRequestWhole) {
  const std::string cache = FreshDir("batch_cache");
  Subprocess server({"/usr/bin/env", "SLOSERVE_CACHE_DIR=" + cache, kBin, "serve", "--port", "0",
                     "--duration", "600", "--json"});
  ASSERT_TRUE(server.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << server.err();
  const uint16_t port = testing::ListenPort(server.err());
  ASSERT_NE(port, 0) << server.err();
  auto infer = [&](int rows) {
    const nlohmann::json request = {{"inputs",
                                     {{{"name", "input"},
                                       {"shape", {rows, 16}},
                                       {"datatype", "FP32"},
                                       {"data", std::vector<float>(16 * rows, 1.0f)}}}}};
    return nlohmann::json::parse(
        testing::HttpPostBody(port, "/v2/models/image/infer", request.dump()), nullptr, false);
  };
  const auto two = infer(2);
  ASSERT_TRUE(two.is_object() && two.contains("outputs")) << two.dump();
  EXPECT_EQ(two["outputs"][0]["shape"], nlohmann::json::array({2, 1})) << two.dump();
  const auto meta = nlohmann::json::parse(testing::HttpGetBody(port, "/v2/models/image"));
  EXPECT_EQ(meta["parameters"]["max_batch_size"], 9) << meta.dump();
  const auto config = nlohmann::json::parse(testing::HttpGetBody(port, "/v2/models/image/config"));
  EXPECT_EQ(config["max_batch_size"], 9) << config.dump();
  EXPECT_EQ(config["input"][0]["dims"], nlohmann::json::array({16})) << config.dump();
  const auto nine = infer(9);
  EXPECT_EQ(nine["outputs"][0]["shape"], nlohmann::json::array({9, 1})) << nine.dump();
  const auto ten = infer(10);
  EXPECT_NE(ten.value("error", "").find("at most 9 rows"), std::string::npos) << ten.dump();
  server.Signal(SIGTERM);
  auto done = server.Wait();
  ASSERT_EQ(done.exit_code, 0) << done.err;
  const auto summary = nlohmann::json::parse(done.out, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << done.out;
  EXPECT_EQ(summary["bad_requests"], 1) << done.out;
  EXPECT_EQ(summary["arrived"], 2) << done.out;
  EXPECT_EQ(summary["dropped"], 0) << done.out;
  std::filesystem::remove_all(cache);
}

// The main job: RAMSIS serves a more accurate variant than the peak-provisioned fixed
// one at low load and switches to faster ones when the load rises. The shipped policy
// set is used (an empty cache dir would otherwise mean minutes of generation).
TEST(FirstHourE2eTest, DemoShowsTheVariantMixChangingWithLoad) {
  const std::string cache = FreshDir("demo_cache");
  auto r = RunProcess({"/usr/bin/env", "SLOSERVE_CACHE_DIR=" + cache, kBin, "demo", "--ramp",
                       "200,3000", "--step-seconds", "1.5", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 2u);
  const auto& ramsis = j["runs"][0];
  const auto& fixed = j["runs"][1];
  ASSERT_EQ(ramsis["steps"].size(), 2u);
  ASSERT_EQ(fixed["steps"].size(), 2u);
  for (const auto& run : {ramsis, fixed}) {
    for (const auto& step : run["steps"]) {
      // Admission control (docs/admission.md) may shed or drop a little where this machine
      // cannot keep up (429/504 instead of late answers); most requests are answered.
      EXPECT_LE(step["errors"].get<double>(),
                0.2 * (step["answered"].get<double>() + step["errors"].get<double>()))
          << step.dump();
      EXPECT_GT(step["answered"].get<int>(), 0) << step.dump();
    }
  }
  // The fixed run answers with its one variant only.
  EXPECT_EQ(fixed["steps"][0]["variants"].size(), 1u);
  EXPECT_TRUE(fixed["steps"][0]["variants"].contains("shufflenet_v2_x1_5"));
  // RAMSIS: more accurate at 200 qps than the fixed variant, and a different mix at 3000.
  EXPECT_GT(ramsis["steps"][0]["accuracy"].get<double>(),
            fixed["steps"][0]["accuracy"].get<double>() + 5);
  EXPECT_NE(ramsis["steps"][0]["variants"], ramsis["steps"][1]["variants"]);
  EXPECT_LT(ramsis["steps"][1]["accuracy"].get<double>(),
            ramsis["steps"][0]["accuracy"].get<double>());
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace sloserve

// End-to-end (issue 36 item 4), the real binary serving the embedded default: an slo_ms no
// variant can meet is a 400 naming the fastest achievable latency (as the same SLO in a
// config is refused at start), and an unknown parameter comes back as a warning.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/sloserve_paths.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/subprocess.h"

namespace sloserve {
namespace {

using testing::kBin;
using testing::RunProcess;
using testing::Subprocess;

std::string ImageRequest(const std::string& parameters) {
  nlohmann::json r;
  r["inputs"] = {{{"name", "input"}, {"shape", {1, 16}}, {"datatype", "FP32"}}};
  for (int i = 0; i < 16; ++i) r["inputs"][0]["data"].push_back(0);
  r["parameters"] = nlohmann::json::parse(parameters);
  return r.dump();
}

TEST(RequestChecksE2eTest, UnmeetableSloIs400AndUnknownParametersAreWarnings) {
  Subprocess server({kBin, "serve", "--port", "0", "--threads", "1"});
  ASSERT_TRUE(server.WaitForStderr("sloserve: ready", std::chrono::seconds(120))) << server.err();
  const uint16_t port = testing::ListenPort(server.err());

  const std::string low = testing::HttpExchange(
      port, testing::HttpPostRequest("/v2/models/image/infer", ImageRequest(R"({"slo_ms":0.5})")));
  EXPECT_NE(low.find(" 400 "), std::string::npos) << low;
  EXPECT_NE(low.find("below the fastest achievable latency"), std::string::npos) << low;
  EXPECT_NE(low.find("at batch 1"), std::string::npos) << low;

  const auto ok = nlohmann::json::parse(
      testing::HttpPostBody(port, "/v2/models/image/infer", ImageRequest(R"({"slo":500})")),
      nullptr, false);
  ASSERT_TRUE(ok.is_object()) << server.err();
  ASSERT_TRUE(ok.contains("warnings")) << ok.dump();
  EXPECT_EQ(ok["warnings"][0], "unknown parameter 'slo' ignored (did you mean 'slo_ms'?)");
  EXPECT_TRUE(ok["parameters"].contains("variant")) << ok.dump();

  const auto clean = nlohmann::json::parse(
      testing::HttpPostBody(port, "/v2/models/image/infer", ImageRequest(R"({"slo_ms":500})")),
      nullptr, false);
  ASSERT_TRUE(clean.is_object());
  EXPECT_FALSE(clean.contains("warnings")) << clean.dump();

  // The same SLO in the config: refused at start, as before.
  auto config =
      RunProcess({kBin, "serve", "--port", "0", "--set", "slo_ms=0.5", "--duration", "1"});
  EXPECT_EQ(config.exit_code, 1);
  EXPECT_NE(config.err.find("impossible SLO"), std::string::npos) << config.err;
}

}  // namespace
}  // namespace sloserve

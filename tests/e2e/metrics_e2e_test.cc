// /metrics of a real `sloserve serve` under `sloserve loadgen` (issue 36 item 2): the
// latency histogram is dense around the SLO, so the p99 Prometheus computes from it
// (histogram_quantile) lands within one bucket of the p99 the client measured; the
// build and process series are there; server.latency_buckets replaces the bounds, and a
// bad list is refused naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "e2e/sloserve_paths.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/subprocess.h"

namespace sloserve {
namespace {

using testing::kBin;
using testing::RunProcess;
using testing::Subprocess;

// The request-duration histogram summed over its series: upper bound -> cumulative count.
std::map<double, double> RequestHistogram(const std::string& text) {
  std::map<double, double> cumulative;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("sloserve_request_duration_seconds_bucket{", 0) != 0) continue;
    const size_t le = line.find("le=\"");
    const size_t end = line.find('"', le + 4);
    const std::string bound = line.substr(le + 4, end - le - 4);
    const double upper = bound == "+Inf" ? INFINITY : std::stod(bound);
    cumulative[upper] += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return cumulative;
}

// Prometheus' histogram_quantile: linear within the bucket that holds the rank.
double HistogramQuantile(double q, const std::map<double, double>& cumulative) {
  const double total = cumulative.rbegin()->second;
  const double rank = q * total;
  double lower = 0, below = 0;
  for (const auto& [upper, count] : cumulative) {
    if (count >= rank) {
      if (std::isinf(upper)) return lower;
      return lower + (upper - lower) * (rank - below) / std::max(1e-12, count - below);
    }
    lower = upper;
    below = count;
  }
  return lower;
}

size_t BucketIndex(const std::map<double, double>& cumulative, double seconds) {
  size_t i = 0;
  for (const auto& [upper, count] : cumulative) {
    if (seconds <= upper) return i;
    ++i;
  }
  return i;
}

// The listening port once serve says it is ready; 0 (and a test failure) if it never does.
uint16_t WaitReady(Subprocess& server) {
  if (!server.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) {
    ADD_FAILURE() << "serve never became ready: " << server.err();
    return 0;
  }
  return testing::ListenPort(server.err());
}

// One request to the default model, so the histograms have a series.
void InferOnce(uint16_t port) {
  const std::string body = R"({"inputs":[{"name":"input","datatype":"FP32","shape":[1,16],)"
                           R"("data":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}]})";
  testing::HttpExchange(port, testing::HttpPostRequest("/v2/models/image/infer", body));
}

TEST(MetricsE2eTest, HistogramP99IsWithinOneBucketOfTheClientsAtTheSlo) {
  // A fixed, slower variant at a moderate load, so the p99 sits near the 150 ms SLO (about
  // 190 ms on a quiet machine: 8 workers of efficientnet_v2_s at 60 queries/s), where the
  // default buckets alone were 100 ms wide (0.1, 0.2].
  Subprocess server({kBin, "serve", "--port", "0", "--duration", "600", "--set", "workers=8",
                     "--set", "policy.selection=fixed", "--set", "policy.variant=efficientnet_v2_s",
                     "--set", "engine.admission=off"});
  const uint16_t port = WaitReady(server);
  ASSERT_NE(port, 0) << server.err();
  auto load = RunProcess({kBin, "loadgen", "--port", std::to_string(port), "--model", "image",
                          "--qps", "60", "--duration", "4", "--suite", "ramsis-image", "--json"});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const auto report = nlohmann::json::parse(load.out);
  ASSERT_GT(report["ok"].get<int>(), 100);
  const std::string text = testing::HttpGetBody(port, "/metrics");
  const std::map<double, double> hist = RequestHistogram(text);
  ASSERT_GE(hist.size(), 20u);
  EXPECT_EQ(hist.count(0.15), 1u) << "the SLO is a bucket bound";
  EXPECT_EQ(hist.count(0.135), 1u);
  EXPECT_EQ(hist.count(0.165), 1u);
  const double client_p99 = report["latency_ms"]["p99"].get<double>() / 1e3;
  const double server_p99 = HistogramQuantile(0.99, hist);
  const long gap = static_cast<long>(BucketIndex(hist, client_p99)) -
                   static_cast<long>(BucketIndex(hist, server_p99));
  EXPECT_LE(std::labs(gap), 1) << "client p99 " << client_p99 << " s, histogram p99 " << server_p99
                               << " s";
  // The build and the process.
  EXPECT_NE(text.find("sloserve_build_info{version=\""), std::string::npos);
  EXPECT_NE(text.find("\nprocess_resident_memory_bytes "), std::string::npos);
  EXPECT_NE(text.find("\nprocess_cpu_seconds_total "), std::string::npos);
  EXPECT_NE(text.find("\nprocess_open_fds "), std::string::npos);
  EXPECT_NE(text.find("\nsloserve_accuracy_ratio "), std::string::npos);
  EXPECT_NE(text.find("since the server started"), std::string::npos);  // windows stated
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait().exit_code, 0);
}

// docs/grafana/sloserve.json: provisioning-safe (a datasource variable, no ${DS_...}
// import placeholders), an instance variable, accuracy and attainment panels, and every
// metric its queries name is one a real serve exports.
TEST(MetricsE2eTest, DashboardQueriesNameExportedMetrics) {
  std::ifstream in(std::string(SLOSERVE_SOURCE_DIR) + "/docs/grafana/sloserve.json");
  ASSERT_TRUE(in) << "docs/grafana/sloserve.json";
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(raw.find("${DS_"), std::string::npos) << "an import-only placeholder";
  const auto dash = nlohmann::json::parse(raw);
  std::set<std::string> variables, titles;
  for (const auto& v : dash["templating"]["list"]) variables.insert(v["name"].get<std::string>());
  EXPECT_EQ(variables, (std::set<std::string>{"datasource", "instance", "model"}));
  for (const auto& p : dash["panels"]) titles.insert(p["title"].get<std::string>());
  EXPECT_TRUE(titles.count("Accuracy of answered requests (0-1)"));
  // Several models on one server (issue 31): accuracy and latency quantiles per model, not
  // mixed across models.
  for (const auto& p : dash["panels"]) {
    for (const auto& t : p["targets"]) {
      const std::string expr = t["expr"];
      if (expr.find("histogram_quantile") != std::string::npos ||
          expr.find("sloserve_variant_accuracy_ratio") != std::string::npos) {
        EXPECT_NE(expr.find("model)"), std::string::npos) << expr;
      }
    }
  }
  EXPECT_TRUE(titles.count("SLO attainment, last 5 minutes"));

  Subprocess server({kBin, "serve", "--port", "0", "--duration", "600"});
  const uint16_t port = WaitReady(server);
  ASSERT_NE(port, 0) << server.err();
  InferOnce(port);
  const std::string text = testing::HttpGetBody(port, "/metrics");
  const std::regex metric(R"(\b((sloserve|process)_[a-z_]+))");
  int names = 0;
  for (const auto& p : dash["panels"]) {
    for (const auto& t : p["targets"]) {
      const std::string expr = t["expr"];
      for (auto it = std::sregex_iterator(expr.begin(), expr.end(), metric);
           it != std::sregex_iterator(); ++it) {
        ++names;
        EXPECT_NE(text.find("\n" + (*it)[1].str()), std::string::npos)
            << p["title"] << ": " << (*it)[1].str() << " is not exported";
      }
    }
  }
  EXPECT_GT(names, 15);
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait().exit_code, 0);
}

TEST(MetricsE2eTest, LatencyBucketsAreConfigurableAndChecked) {
  Subprocess server({kBin, "serve", "--port", "0", "--duration", "600", "--set",
                     "server.latency_buckets=0.05,0.1,0.15,0.3"});
  const uint16_t port = WaitReady(server);
  ASSERT_NE(port, 0) << server.err();
  InferOnce(port);
  const std::map<double, double> hist = RequestHistogram(testing::HttpGetBody(port, "/metrics"));
  std::vector<double> bounds;
  for (const auto& [upper, count] : hist) bounds.push_back(upper);
  EXPECT_EQ(bounds, (std::vector<double>{0.05, 0.1, 0.15, 0.3, INFINITY}));
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait().exit_code, 0);
  for (const auto& [value, message] : std::vector<std::pair<std::string, std::string>>{
           {"0.2,0.1", "ascending"},
           {"0.1,abc", "expected comma-separated numbers"},
           {"0,1", "(0, 86400]"}}) {
    auto r = RunProcess({kBin, "serve", "--port", "0", "--duration", "1", "--set",
                         "server.latency_buckets=" + value});
    EXPECT_EQ(r.exit_code, 1) << value;
    EXPECT_NE(r.err.find("server.latency_buckets"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace sloserve

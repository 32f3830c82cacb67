// Several models driven at once (issue 31: loadgen --models a:0.7,b:0.3): the totals of
// per-model reports (constructed data, by hand), and a run against a real HttpServer on
// 127.0.0.1 in front of an EngineRuntime serving two models from one pool.
#include "sloserve/loadgen/multi_model_load.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sloserve/runtime/engine_runtime.h"
#include "sloserve/server/http_server.h"
#include "support/multi_model_suite.h"

namespace sloserve {
namespace {

// `n` OK answers of 1..n ms from `variant`, the first `met` of them met; SLO `slo_ms`.
LoadReport Report(int n, const std::string& variant, int met, double slo_ms, int errors = 0) {
  LoadRecorder rec(n);
  for (int i = 1; i <= n; ++i) rec.RecordOk(Millis(i), variant, i <= met, slo_ms);
  for (int i = 0; i < errors; ++i) rec.RecordHttpError(429, R"({"error":"overloaded"})");
  return rec.Finish(n + errors, n + errors, Seconds(2), Seconds(1), slo_ms, 2);
}

TEST(MergeLoadReportsTest, TotalsAreOverEveryModelsRequests) {
  const std::vector<ModelLoadReport> models = {
      {"a", 0.5, Report(100, "a1", 100, 200, /*errors=*/2)},  // 1..100 ms
      {"b", 0.5, Report(100, "b1", 50, 200)},                 // 1..100 ms again
  };
  const LoadReport t = MergeLoadReports(models);
  EXPECT_EQ(t.scheduled, 202);
  EXPECT_EQ(t.sent, 202);
  EXPECT_EQ(t.ok, 200);
  EXPECT_EQ(t.http_errors, 2);
  EXPECT_EQ(t.errors_by_status.at(429), 2);
  ASSERT_EQ(t.error_examples.size(), 1u);
  EXPECT_EQ(t.variant_counts.at("a1"), 100);
  EXPECT_EQ(t.variant_counts.at("b1"), 100);
  // 200 latencies, each of 1..100 ms twice: nearest-rank p50 is the 100th, 50 ms.
  EXPECT_EQ(t.latency_p50_ms, 50);
  EXPECT_EQ(t.latency_p99_ms, 99);  // the 198th
  EXPECT_EQ(t.latency_max_ms, 100);
  // Every OK answer within the 200 ms SLO (client); 150 said met by the server; of 202 sent.
  EXPECT_EQ(t.slo_ms, 200);
  EXPECT_DOUBLE_EQ(t.slo_attainment_client, 200.0 / 202);
  EXPECT_DOUBLE_EQ(t.slo_attainment_server, 150.0 / 202);
  EXPECT_EQ(t.peak_connections, 4);
  // Different client-side SLOs: no single figure.
  const std::vector<ModelLoadReport> mixed = {{"a", 0.5, Report(10, "a1", 10, 100)},
                                              {"b", 0.5, Report(10, "b1", 10, 200)}};
  EXPECT_EQ(MergeLoadReports(mixed).slo_ms, 0);
  const nlohmann::json j = MultiModelReport{models, t}.ToJson();
  ASSERT_EQ(j["models"].size(), 2u);
  EXPECT_EQ(j["models"][0]["model"], "a");
  EXPECT_EQ(j["models"][1]["model"], "b");
  EXPECT_EQ(j["models"][1]["share"], 0.5);
  EXPECT_EQ(j["total"]["sent"], 202);
}

// Two models at 70% / 30% of the load against one server: each model's requests reach
// that model (the answering variants say so), and the totals add up.
TEST(MultiModelLoadTest, DrivesEveryModelOfARealServerAtOnce) {
  const ProfileSuite suite = testing::MultiModelSuite();
  RuntimeOptions o;
  o.deployment.task = "image";
  o.deployment.workers = 4;
  o.policy.options["variant"] = "img_fast";
  o.service.time_scale = 0.02;  // text's 200 ms batch holds its worker 4 ms
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  HttpServer::Options h;
  h.host = "127.0.0.1";
  h.port = 0;
  auto server = HttpServer::Create(h, rt->get());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto port = (*server)->Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();

  std::vector<LoadOptions> per_model;
  const std::vector<double> shares = {0.7, 0.3};
  const std::vector<std::string> names = {"image", "text"};
  for (size_t i = 0; i < names.size(); ++i) {
    LoadOptions l;
    l.port = *port;
    l.task = names[i];
    l.shape = {1, 4};
    l.connections = 2;
    l.max_connections = 8;
    l.slo_ms = 5000;  // generous: the test counts answers, it does not time them
    const int n = i == 0 ? 14 : 6;
    for (int k = 0; k < n; ++k) l.schedule.push_back(Millis(10 * k));
    per_model.push_back(std::move(l));
  }
  auto report = RunMultiModelLoad(per_model, shares);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->models.size(), 2u);
  EXPECT_EQ(report->models[0].model, "image");
  EXPECT_EQ(report->models[0].report.ok, 14);
  EXPECT_EQ(report->models[0].report.variant_counts.at("img_fast"), 14);
  EXPECT_EQ(report->models[1].model, "text");
  EXPECT_EQ(report->models[1].report.ok, 6);
  EXPECT_EQ(report->models[1].report.variant_counts.at("txt_only"), 6);
  EXPECT_EQ(report->total.sent, 20);
  EXPECT_EQ(report->total.ok, 20);
  const std::string text = report->ToText();
  EXPECT_NE(text.find("== model image (share 0.70)"), std::string::npos) << text;
  EXPECT_NE(text.find("== total (2 models)"), std::string::npos) << text;

  // A model the server does not serve: its requests fail with the server's 404, the
  // other model's are answered.
  per_model[1].task = "txet";
  auto wrong = RunMultiModelLoad(per_model, shares);
  ASSERT_TRUE(wrong.ok()) << wrong.status().ToString();
  EXPECT_EQ(wrong->models[0].report.ok, 14);
  EXPECT_EQ(wrong->models[1].report.errors_by_status.at(404), 6);
  ASSERT_FALSE(wrong->models[1].report.error_examples.empty());
  EXPECT_NE(wrong->models[1].report.error_examples[0].message.find("did you mean 'text'?"),
            std::string::npos);
  (*server)->Stop();
  (*rt)->Stop();
}

}  // namespace
}  // namespace sloserve

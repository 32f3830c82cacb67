// The open-loop load generator: report math, request body, and a short run against the
// real HttpServer with FakeBackend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "server/server_fixture.h"
#include "sloserve/core/rng.h"
#include "sloserve/loadgen/load_generator.h"
#include "sloserve/loadgen/load_report.h"

namespace sloserve {
namespace {

using json = nlohmann::json;

std::vector<Duration> Poisson(double qps, Duration span, uint64_t seed) {
  Rng rng = MakeRng(seed, "loadgen_test");
  std::vector<Duration> out;
  double t = 0;
  for (;;) {
    t += -std::log(1.0 - Uniform01(rng)) / qps;
    if (SecondsF(t) >= span) return out;
    out.push_back(SecondsF(t));
  }
}

TEST(LoadReportTest, PercentilesAndAttainment) {
  LoadRecorder rec(10);
  for (int i = 1; i <= 100; ++i) {
    rec.RecordOk(Millis(i), i % 2 ? "a" : "b", /*met_slo=*/i <= 40, /*slo_ms=*/50);
  }
  rec.RecordHttpError(429);
  rec.RecordHttpError(429);
  rec.RecordTimeout();
  LoadReport r = rec.Finish(103, 103, Seconds(2), Seconds(1), 50, 4);
  EXPECT_EQ(r.ok, 100);
  EXPECT_EQ(r.http_errors, 2);
  EXPECT_EQ(r.errors_by_status.at(429), 2);
  EXPECT_EQ(r.completed(), 103);
  EXPECT_DOUBLE_EQ(r.latency_p50_ms, 50);
  EXPECT_DOUBLE_EQ(r.latency_p95_ms, 95);
  EXPECT_DOUBLE_EQ(r.latency_p99_ms, 99);
  EXPECT_DOUBLE_EQ(r.latency_max_ms, 100);
  EXPECT_DOUBLE_EQ(r.latency_mean_ms, 50.5);
  EXPECT_DOUBLE_EQ(r.achieved_qps, 51.5);
  EXPECT_DOUBLE_EQ(r.offered_qps, 102);
  EXPECT_DOUBLE_EQ(r.slo_attainment_client, 50.0 / 103);
  EXPECT_DOUBLE_EQ(r.slo_attainment_server, 40.0 / 103);
  EXPECT_EQ(r.variant_counts.at("a"), 50);
  const json j = r.ToJson();
  EXPECT_EQ(j["errors_by_status"]["429"], 2);
  EXPECT_EQ(j["variant_counts"]["b"], 50);
  EXPECT_EQ(j["latency_ms"]["p99"], 99.0);
  EXPECT_NE(r.ToText().find("p99 99.00"), std::string::npos) << r.ToText();
}

TEST(LoadReportTest, EmptyIsZero) {
  LoadRecorder rec;
  LoadReport r = rec.Finish(0, 0, Duration::zero(), Duration::zero(), 0, 0);
  EXPECT_EQ(r.latency_p99_ms, 0);
  EXPECT_TRUE(r.ToJson()["slo_attainment_client"].is_null());
}

TEST(LoadGenTest, BodyMatchesOptions) {
  LoadOptions o;
  o.task = "image";
  o.rows = 2;
  o.shape = {2, 3};
  o.slo_ms = 25;
  o.app = "a1";
  o.priority = 2;
  auto body = BuildInferBody(o);
  ASSERT_TRUE(body.ok());
  const json j = json::parse(*body);
  EXPECT_EQ(j["inputs"][0]["shape"], json({2, 3}));
  EXPECT_EQ(j["inputs"][0]["data"].size(), 6u);
  EXPECT_EQ(j["parameters"]["slo_ms"], 25.0);
  EXPECT_EQ(j["parameters"]["app"], "a1");
  EXPECT_EQ(j["parameters"]["priority"], 2);
  o.shape = {3, 3};
  EXPECT_FALSE(BuildInferBody(o).ok());
}

TEST(LoadGenTest, BodyForRowsReplacesTheBatchDimension) {
  LoadOptions o;
  o.task = "image";
  o.shape = {-1, 3};  // shape[0] is a placeholder for each request's rows
  auto body = BuildInferBody(o, 5);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  const json j = json::parse(*body);
  EXPECT_EQ(j["inputs"][0]["shape"], json({5, 3}));
  EXPECT_EQ(j["inputs"][0]["data"].size(), 15u);
  EXPECT_FALSE(j.contains("parameters"));  // nothing set: no slo_ms, app or priority
  EXPECT_FALSE(BuildInferBody(o, 0).ok());
  o.shape = {};
  body = BuildInferBody(o, 4);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(json::parse(*body)["inputs"][0]["shape"], json({4}));
}

TEST(LoadGenTest, RequestRowsMustMatchTheSchedule) {
  LoadOptions o;
  o.task = "image";
  o.port = 1;
  o.schedule = {Millis(0), Millis(1)};
  o.request_rows = {3};
  EXPECT_EQ(RunLoad(o).status().code(), StatusCode::kInvalidArgument);
  o.request_rows = {3, 0};
  EXPECT_EQ(RunLoad(o).status().code(), StatusCode::kInvalidArgument);
}

TEST(LoadReportTest, JsonCarriesSizesAndHardware) {
  LoadRecorder rec;
  rec.RecordOk(Millis(5), "a", true, 0, "g4dn.xlarge");
  rec.RecordOk(Millis(5), "a", true, 0, "r5n.large");
  rec.RecordOk(Millis(5), "a", true, 0, "r5n.large");
  rec.RecordOk(Millis(5), "a", true, 0);  // hardware not reported: not counted
  LoadReport r = rec.Finish(4, 4, Seconds(1), Seconds(1), 0, 1);
  r.sizes = "deeprecsys";
  r.rows_mean = 240.5;
  const json j = r.ToJson();
  EXPECT_EQ(j["sizes"], "deeprecsys");
  EXPECT_EQ(j["rows_mean"], 240.5);
  EXPECT_EQ(j["hardware_counts"], json({{"g4dn.xlarge", 1}, {"r5n.large", 2}}));
  EXPECT_NE(r.ToText().find("sizes      deeprecsys  (mean 240.5 rows"), std::string::npos)
      << r.ToText();
  EXPECT_NE(r.ToText().find("r5n.large: 2"), std::string::npos) << r.ToText();
}

TEST(LoadGenTest, UnreachableServerIsUnavailable) {
  LoadOptions o;
  o.task = "image";
  o.port = 1;  // nothing listens there
  o.schedule = {Millis(0)};
  auto report = RunLoad(o);
  EXPECT_EQ(report.status().code(), StatusCode::kUnavailable);
}

class LoadGenServerTest : public ServerFixture {};

// Behavioural, not a speed test (how fast a run goes is measured by the benchmarks,
// bench/server_overhead.sh and DISABLED_ThroughputWithTrivialBackend below): the whole
// schedule is sent, every request is answered exactly once, and the generator never runs
// ahead of its schedule. Nothing here depends on how fast or busy the machine is.
TEST_F(LoadGenServerTest, OpenLoopRunAt500Qps) {
  FakeBackend::Options backend;
  backend.delay = Millis(5);
  StartServer(backend);
  LoadOptions o;
  o.port = port_;
  o.task = "image";
  o.rows = 1;
  o.shape = {1, 3};
  o.slo_ms = 1000;
  o.connections = 16;
  o.schedule = Poisson(500, Seconds(1), 7);
  int progress_calls = 0;
  int64_t last_completed = 0;
  o.progress_interval = Millis(200);
  auto report = RunLoad(o, [&](const LoadProgress& p) {
    ++progress_calls;
    EXPECT_LE(p.completed, p.sent);
    EXPECT_LE(p.sent, p.scheduled);
    EXPECT_GE(p.completed, last_completed);  // progress never goes backwards
    last_completed = p.completed;
  });
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const LoadReport& r = *report;
  SCOPED_TRACE(r.ToText());
  const auto n = static_cast<int64_t>(o.schedule.size());
  EXPECT_GT(n, 350);  // the seeded schedule: about 500 requests over 1 s
  // The whole schedule went out and every request was answered exactly once, with 200.
  EXPECT_EQ(r.scheduled, n);
  EXPECT_EQ(r.sent, n);
  EXPECT_EQ(r.ok, n);
  EXPECT_EQ(r.completed(), n);
  EXPECT_EQ(r.http_errors + r.timeouts + r.transport_errors, 0);
  EXPECT_EQ(r.variant_counts.at("resnet18"), n);
  EXPECT_EQ(backend_->submitted(), n);
  EXPECT_EQ(backend_->completed(), n);
  // Open loop: the offered rate is the schedule's, and the run cannot end before the last
  // scheduled send, so it never completes faster than the schedule (however slow the
  // machine, these hold; a generator that sent everything at once would break them).
  const double span_s = ToSeconds(o.schedule.back());
  EXPECT_NEAR(r.offered_qps, static_cast<double>(n) / span_s, 0.01 * static_cast<double>(n));
  EXPECT_GE(r.duration, o.schedule.back());
  EXPECT_GT(r.achieved_qps, 0);
  EXPECT_LE(r.achieved_qps, static_cast<double>(n) / span_s);
  // Latency counts from the scheduled time and includes the backend's 5 ms hold.
  EXPECT_GE(r.latency_p50_ms, 5.0);
  EXPECT_LE(r.latency_p50_ms, r.latency_p95_ms);
  EXPECT_LE(r.latency_p95_ms, r.latency_p99_ms);
  EXPECT_LE(r.latency_p99_ms, r.latency_max_ms);
  // The server-side verdict is the backend's (5 ms + 10 us <= 1000 ms: met), whatever the
  // machine; the client-side one counts latencies <= slo_ms, so it is 1 exactly when the
  // worst latency is within the SLO and at most 1/2 when the median is not.
  EXPECT_DOUBLE_EQ(r.slo_attainment_server, 1.0);
  if (r.latency_max_ms <= o.slo_ms) {
    EXPECT_DOUBLE_EQ(r.slo_attainment_client, 1.0);
  }
  if (r.latency_p50_ms > o.slo_ms) {
    EXPECT_LE(r.slo_attainment_client, 0.5);
  }
  // The run spans at least the schedule's 1 s, i.e. several 200 ms progress intervals.
  EXPECT_GE(progress_calls, 2);
}

TEST_F(LoadGenServerTest, CountsErrorsAndQueuesBeyondTheConnectionCap) {
  FakeBackend::Options backend;
  backend.delay = Millis(50);
  StartServer(backend);
  LoadOptions o;
  o.port = port_;
  o.task = "image";
  o.shape = {1, 3};
  o.connections = 2;
  o.max_connections = 4;
  for (int i = 0; i < 40; ++i) o.schedule.push_back(Millis(0));  // a burst of 40 at once
  auto report = RunLoad(o);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->ok, 40);
  EXPECT_EQ(report->peak_connections, 4);
  // 40 requests through 4 connections at 50 ms each: the last waits ~10 rounds, and its
  // latency counts from its scheduled time (no coordinated omission).
  EXPECT_GE(report->latency_max_ms, 450);

  backend_->FailWith(ResourceExhaustedError("full"));
  o.schedule.assign(10, Millis(0));
  report = RunLoad(o);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->ok, 0);
  EXPECT_EQ(report->errors_by_status.at(429), 10);
  EXPECT_EQ(report->slo_attainment_server, 0);
}

TEST_F(LoadGenServerTest, SendsEachRequestWithItsOwnRows) {
  FakeBackend::Options backend;
  backend.hardware = "g4dn.xlarge";
  StartServer(backend);
  LoadOptions o;
  o.port = port_;
  o.task = "image";
  o.shape = {-1, 3};
  o.connections = 4;
  // Unsorted on purpose: each request keeps its rows when the schedule is sorted.
  o.schedule = {Millis(30), Millis(0), Millis(10), Millis(20), Millis(40)};
  o.request_rows = {7, 1, 2, 2, 5};
  o.sizes_label = "test-mix";
  auto report = RunLoad(o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->ok, 5) << report->ToText();
  EXPECT_EQ(report->sizes, "test-mix");
  EXPECT_DOUBLE_EQ(report->rows_mean, 17.0 / 5);
  EXPECT_EQ(report->hardware_counts.at("g4dn.xlarge"), 5);
  const std::map<int32_t, int64_t> want = {{1, 1}, {2, 2}, {5, 1}, {7, 1}};
  EXPECT_EQ(backend_->rows_seen(), want);

  o.request_rows.clear();  // fixed rows: the label says so
  o.shape = {2, 3};
  o.rows = 2;
  o.sizes_label.clear();
  report = RunLoad(o);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->sizes, "constant:2");
  EXPECT_DOUBLE_EQ(report->rows_mean, 2);
}

TEST_F(LoadGenServerTest, ResendsOnceWhenTheServerClosedAnIdleConnection) {
  HttpServer::Options options;
  options.idle_timeout = Millis(100);
  StartServer({}, options);
  LoadOptions o;
  o.port = port_;
  o.task = "image";
  o.shape = {1, 3};
  o.connections = 1;
  o.schedule = {Millis(0), Millis(400)};  // the server closes the connection in between
  auto report = RunLoad(o);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->ok, 2) << report->ToText();
}

// The connections opened before the clock starts and not used yet are closed by the
// server's header_timeout (a new connection's first request must come in time): a request
// that finds one closed is sent again on another, as on a kept-alive one (issue 31's live
// run lost every request of a model at 0.1 queries/s this way).
TEST_F(LoadGenServerTest, ResendsOnceWhenTheServerClosedAConnectionOpenedAhead) {
  HttpServer::Options options;
  options.header_timeout = Millis(100);
  StartServer({}, options);
  LoadOptions o;
  o.port = port_;
  o.task = "image";
  o.shape = {1, 3};
  o.connections = 2;
  o.schedule = {Millis(400), Millis(800)};  // both connections closed before the first
  auto report = RunLoad(o);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->ok, 2) << report->ToText();
  EXPECT_EQ(report->transport_errors, 0) << report->ToText();
}

// Not a pass/fail test: prints the request rate with a trivial backend. Run with
// --gtest_also_run_disabled_tests --gtest_filter='*Throughput*' (SLOSERVE_QPS overrides).
TEST_F(LoadGenServerTest, DISABLED_ThroughputWithTrivialBackend) {
  StartServer();
  const char* env = std::getenv("SLOSERVE_QPS");
  const double qps = env ? std::atof(env) : 20000;
  LoadOptions o;
  o.port = port_;
  o.task = "image";
  o.shape = {1, 3};
  o.connections = 64;
  o.schedule = Poisson(qps, Seconds(3), 11);
  auto report = RunLoad(o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  std::printf("%s", report->ToText().c_str());
}

}  // namespace
}  // namespace sloserve

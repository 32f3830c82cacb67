// EngineRuntime on a heterogeneous deployment: each answer names the instance type that
// ran it and took that type's profiled latency, /metrics counts per type, and a variant
// profiled only on a secondary type is still served.
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <string>

#include "sloserve/runtime/engine_runtime.h"

namespace sloserve {
namespace {

// Task "t": variant "fast" takes 10 ms on "cpu" and 200 ms on "gpu" (constant samples: a
// 20x gap, so that which profile ran is told apart without assuming a fast machine);
// variant "gpu_only" is profiled on "gpu" alone.
ProfileSuite TwoTypeSuite() {
  ProfileSuite s;
  s.set_name("two-types");
  s.set_provenance("hand-written for tests");
  TaskSpec t;
  t.name = "t";
  t.default_slo = Seconds(1);
  const TaskId task = s.AddTask(t);
  HardwareSpec cpu{};
  cpu.name = "cpu";
  cpu.price_per_hour = 1.0;
  cpu.cores = 4;
  HardwareSpec gpu = cpu;
  gpu.name = "gpu";
  const HardwareId c = s.AddHardware(cpu);
  const HardwareId g = s.AddHardware(gpu);
  const VariantId fast = s.AddVariant(VariantSpec{"fast", task, 70.0, 0, Duration(0)});
  const VariantId gpu_only = s.AddVariant(VariantSpec{"gpu_only", task, 80.0, 0, Duration(0)});
  for (int b = 1; b <= 4; ++b) {
    s.AddLatency(c, fast, b, LatencyDistribution(std::vector<int64_t>(5, 10000)));
    s.AddLatency(g, fast, b, LatencyDistribution(std::vector<int64_t>(5, 200000)));
    s.AddLatency(g, gpu_only, b, LatencyDistribution(std::vector<int64_t>(5, 40000)));
  }
  return s;
}

// The value of the Prometheus line starting with `series` ("name{labels} "); -1 if absent.
double Value(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + 1 + series.size()));
}

InferOutcome SubmitAndWait(EngineRuntime& rt, int32_t rows) {
  InferRequest req;
  req.task = "t";
  req.rows = rows;
  std::promise<InferOutcome> p;
  auto f = p.get_future();
  rt.Submit(std::move(req), [&](InferOutcome o) { p.set_value(std::move(o)); });
  return f.get();
}

TEST(HeterogeneousRuntimeTest, AnswersAndMetricsNameTheInstanceType) {
  ProfileSuite suite = TwoTypeSuite();
  RuntimeOptions o;
  o.deployment.hardware = "cpu:1,gpu:1";
  o.policy.options["variant"] = "fast";  // round_robin dispatch: one query per worker in turn
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  ASSERT_EQ((*rt)->Tasks().size(), 1u);
  EXPECT_EQ((*rt)->Tasks()[0].variants, (std::vector<std::string>{"fast", "gpu_only"}));
  (*rt)->Start();
  std::map<std::string, InferOutcome> by_type;
  std::map<std::string, int32_t> rows_on;
  for (int32_t rows : {2, 3}) {
    InferOutcome out = SubmitAndWait(**rt, rows);
    ASSERT_TRUE(out.status.ok()) << out.status.ToString();
    rows_on[out.hardware] = rows;
    by_type[out.hardware] = out;
  }
  ASSERT_EQ(by_type.size(), 2u);  // one on each type
  // Each type's own profile: at least 10 ms on cpu and 200 ms on gpu (a busy machine only
  // adds: the completion is delivered when the engine thread wakes); the cpu worker did not
  // run the gpu's 200 ms (only a 190 ms stall of the engine thread could make it look so).
  EXPECT_GE(by_type.at("cpu").compute_time, Millis(10));
  EXPECT_GE(by_type.at("gpu").compute_time, Millis(200));
  EXPECT_LT(by_type.at("cpu").compute_time, Millis(200));
  const std::string m = (*rt)->PrometheusMetrics();
  for (const char* type : {"cpu", "gpu"}) {
    const std::string label = std::string("{hardware=\"") + type + "\"} ";
    EXPECT_EQ(Value(m, "sloserve_workers" + label), 1) << m;
    EXPECT_EQ(Value(m, "sloserve_workers_active" + label), 1) << m;
    EXPECT_EQ(Value(m, "sloserve_queries_served_total" + label), 1) << m;
    EXPECT_EQ(Value(m, "sloserve_queries_served_late_total" + label),
              by_type.at(type).met_slo ? 0 : 1)
        << m;
    EXPECT_EQ(Value(m, "sloserve_rows_served_total" + label), rows_on.at(type)) << m;
    EXPECT_DOUBLE_EQ(Value(m, "sloserve_service_seconds_total" + label),
                     ToSeconds(by_type.at(type).compute_time))
        << m;
  }
  (*rt)->Stop();
}

TEST(HeterogeneousRuntimeTest, HomogeneousDeploymentsListOnlyTheirType) {
  ProfileSuite suite = TwoTypeSuite();
  RuntimeOptions o;
  o.deployment.hardware = "cpu";
  o.deployment.workers = 3;
  o.policy.options["variant"] = "fast";
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ((*rt)->Tasks()[0].variants, (std::vector<std::string>{"fast"}));
  const std::string m = (*rt)->PrometheusMetrics();
  EXPECT_EQ(Value(m, "sloserve_workers{hardware=\"cpu\"} "), 3) << m;
  EXPECT_EQ(m.find("hardware=\"gpu\""), std::string::npos) << m;
}

}  // namespace
}  // namespace sloserve

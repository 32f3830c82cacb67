#include "sloserve/config/experiment_config.h"

#include <gtest/gtest.h>

namespace sloserve {
namespace {

TEST(ExperimentConfigTest, SweepAndPoliciesExpandToCartesianProduct) {
  auto cfg = ParseExperimentConfig(R"(
name: t
suite: ramsis-text
workers: 4
workload: {arrival: poisson, load_qps: 100}
policy: {variant: bert_tiny}
policies:
  - {name: a, batching: edf}
  - {name: b, batching: fifo, dispatch: jsq}
sweep:
  load_qps: [100, 200, 300]
  workers: [2, 4]
)",
                                   "t.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  auto runs = ExpandRuns(*cfg);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 12u);
  EXPECT_EQ((*runs)[0].policy.name, "a");
  EXPECT_EQ((*runs)[1].policy.name, "b");
  EXPECT_EQ((*runs)[1].policy.dispatch, "jsq");
  EXPECT_EQ((*runs)[1].policy.options.at("variant"), "bert_tiny");  // base option kept
  EXPECT_DOUBLE_EQ((*runs)[2].arrival.rate_qps, 200);
  EXPECT_EQ((*runs)[6].workers, 4);
  EXPECT_EQ((*runs)[6].labels.at("workers"), "4");
}

TEST(ExperimentConfigTest, OverridesReplaceAndSweep) {
  auto cfg = ParseExperimentConfig(
      "suite: ramsis-text\nworkload: {load_qps: 10}\nsweep: {workers: [1, 2]}\n", "x.yaml");
  ASSERT_TRUE(cfg.ok());
  ASSERT_TRUE(
      ApplyOverrides(&*cfg, {"workers=3", "load_qps=[5,6,7]", "policy.variant=bert_mini"}).ok());
  auto runs = ExpandRuns(*cfg);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].workers, 3);
  EXPECT_DOUBLE_EQ((*runs)[2].arrival.rate_qps, 7);
  EXPECT_EQ((*runs)[0].policy.options.at("variant"), "bert_mini");
  for (const char* typo : {"workers=[4,]", "workers=[,4]", "workers=[4,,5]", "workers=[ ]"}) {
    const Status st = ApplyOverrides(&*cfg, {typo});
    EXPECT_FALSE(st.ok()) << typo;
    EXPECT_NE(st.message().find("--set workers"), std::string::npos) << st.ToString();
  }
  ASSERT_TRUE(ApplyOverrides(&*cfg, {"policy.variant="}).ok());  // "key=" removes it
  auto removed = ExpandRuns(*cfg);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ((*removed)[0].policy.options.count("variant"), 0u);
}

// A swept policy name with a `policies:` list: each entry runs the swept value (as a
// scalar --set gives every entry its value); it was dropped, every run used the entry's own
// and the rows recorded values no run used.
TEST(ExperimentConfigTest, ASweptPolicyNameReachesEveryEntry) {
  auto cfg = ParseExperimentConfig(R"(
suite: ramsis-text
workload: {arrival: poisson, load_qps: 100}
policy: {variant: bert_tiny}
policies:
  - {name: a, batching: edf}
  - {name: b, batching: edf, dispatch: jsq}
sweep:
  policy.batching: [fifo, clipper]
)",
                                   "t.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  auto runs = ExpandRuns(*cfg);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*runs)[i].policy.batching, i < 2 ? "fifo" : "clipper") << i;
    EXPECT_EQ((*runs)[i].labels.at("policy.batching"), (*runs)[i].policy.batching) << i;
  }
  EXPECT_EQ((*runs)[1].policy.dispatch, "jsq");  // the entry's other names stay
}

TEST(ExperimentConfigTest, ErrorsNameTheFileAndField) {
  struct Case {
    const char* yaml;
    const char* expect;
  };
  const Case cases[] = {
      {"suite: [a, b]\n", "x.yaml:1"},
      {"wrokers: 3\n", "unknown key 'wrokers'"},
      {"workers: many\n", "'workers'"},
      {"workers: 0\n", "'workers'"},
      {"slo_ms: -5\n", "'slo_ms'"},
      {"workload: {arrival: poisson, load_qps: -1}\n", "'workload.load_qps'"},
      {"workload: {arrival: poisson, load_qps: 0}\n", "rate_qps"},
      {"workload: {arrival: warp}\n", "warp"},
      {"workload: {load_qps: 5}\nexecutor: {latency: p200}\n", "p200"},
      {"sweep: {bogus: [1]}\n", "bogus"},
      {"a: b: c\n", "x.yaml:1"},
      {"workload: {load_qps: 5}\nslo_mix: \"150:1,abc:2\"\n", "slo_mix"},
      // A key twice in one mapping: the last silently won.
      {"workers: 4\nslo_ms: 100\nworkers: 8\n",
       "x.yaml:3:1: key 'workers' given twice (first at line 1)"},
      {"workload: {load_qps: 5}\nworkload: {arrival: poisson}\n", "key 'workload' given twice"},
      {"workload: {load_qps: 5, load_qps: 6}\n",
       "x.yaml:1:25: key 'load_qps' given twice (first at line 1)"},
      {"workload: {load_qps: 5}\nworkload.load_qps: 6\n", "key 'workload.load_qps' given twice"},
      {"policies:\n  - {dispatch: jsq, dispatch: round_robin}\n", "key 'dispatch' given twice"},
      {"models:\n  - {name: a, name: b}\n", "key 'name' given twice"},
      {"sweep: {workers: [1], workers: [2]}\n", "key 'workers' given twice"},
      // A quote left open took the rest of the file as its value.
      {"name: \"unterminated\nsuite: ramsis-image\nworkers: 4\n",
       "x.yaml:1:7: a quoted string is not closed"},
      {"workers: 2\nname: 'open it''s\n", "x.yaml:2:7: a quoted string is not closed (no '"},
  };
  for (const Case& c : cases) {
    auto cfg = ParseExperimentConfig(c.yaml, "x.yaml");
    Status st = cfg.ok() ? ExpandRuns(*cfg).status() : cfg.status();
    ASSERT_FALSE(st.ok()) << c.yaml;
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << c.yaml << " -> " << st.message();
  }
  EXPECT_FALSE(LoadExperimentConfig("/nonexistent/x.yaml").ok());
  auto cfg = ParseExperimentConfig("suite: ramsis-text\n", "x.yaml");
  ASSERT_TRUE(cfg.ok());
  EXPECT_FALSE(ApplyOverrides(&*cfg, {"novalue"}).ok());
  EXPECT_FALSE(ApplyOverrides(&*cfg, {"nokey.x=1"}).ok());
}

// Found by config_fuzzer: a trace name longer than the OS allows made the file lookup
// throw (ENAMETOOLONG) and abort the process; it is a trace that does not exist.
TEST(ExperimentConfigTest, OverlongTraceNameIsAMissingTraceNotACrash) {
  const std::string name(300, 'x');
  auto cfg = ParseExperimentConfig(
      "suite: ramsis-text\nworkload: {arrival: trace, trace: " + name + "}\n", "/tmp/t.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  StatusOr<std::vector<RunSpec>> runs = InvalidArgumentError("not expanded");
  ASSERT_NO_THROW(runs = ExpandRuns(*cfg));
  if (runs.ok()) {  // the arrival factory reports it missing when the run starts
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_NE((*runs)[0].arrival.trace_path.find(name), std::string::npos);
  } else {
    EXPECT_NE(runs.status().message().find("trace"), std::string::npos) << runs.status().ToString();
  }
}

// Found by fuzz_test under UBSan: a time too large for a Duration (int64 microseconds)
// was converted anyway, which is undefined behaviour; each is refused naming its key and
// range, and the largest allowed value still converts.
TEST(ExperimentConfigTest, TimesTooLargeForADurationAreRefusedNamingTheKey) {
  const std::string kBase = "suite: ramsis-text\nworkload: {load_qps: 5}\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"slo_ms: 1e53\n", "'slo_ms': must be in [0, 86400000] (got 1e+53)"},
      {"duration_s: 1e300\n", "'duration_s': must be in (0, 31622400]"},
      {"engine: {series_interval_ms: 1e40}\n", "'engine.series_interval_ms': must be in [1, "},
      {"engine: {plan_interval_ms: 0}\n", "'engine.plan_interval_ms': must be in [1, "},
      {"engine: {offline_delay_ms: 1e20}\n", "'engine.offline_delay_ms': must be in [0, "},
      {"slo_mix: \"1e53:1\"\n", "'slo_mix'"},
      {"slo_mix: \"150:inf\"\n", "'slo_mix'"},
  };
  for (const auto& [yaml, expect] : cases) {
    auto cfg = ParseExperimentConfig(kBase + yaml, "x.yaml");
    const Status st = cfg.ok() ? ExpandRuns(*cfg).status() : cfg.status();
    ASSERT_FALSE(st.ok()) << yaml;
    EXPECT_NE(st.message().find(expect), std::string::npos) << yaml << " -> " << st.message();
  }
  auto cfg = ParseExperimentConfig(kBase + "slo_ms: 86400000\n", "x.yaml");
  ASSERT_TRUE(cfg.ok());
  auto runs = ExpandRuns(*cfg);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  EXPECT_EQ((*runs)[0].slo, Seconds(86'400));
}

// Issue 37 (A): extreme numbers made `sloserve sim` spin forever (a gap below a
// microsecond never advances time; cv^2 over- or underflows) or took batches to 0 us.
// Each is refused naming the key, the value and the range; the edges are accepted.
TEST(ExperimentConfigTest, ExtremeNumbersAreRefusedNamingKeyValueAndRange) {
  const std::string kBase = "suite: ramsis-text\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"workload: {load_qps: 1e308}\n",
       "'workload.load_qps': must be in [0, 1000000] (got 1e+308)"},
      {"workload: {load_qps: 9.2e18}\n",
       "'workload.load_qps': must be in [0, 1000000] (got 9.2e+18)"},
      {"workload: {load_qps: 1000000.5}\n", "'workload.load_qps': must be in [0, 1000000]"},
      {"workload: {arrival: gamma, load_qps: 5, cv: 1e308}\n",
       "'workload.cv': must be in [0.001, 100] (got 1e+308)"},
      {"workload: {arrival: gamma, load_qps: 5, cv: 9.2e18}\n",
       "'workload.cv': must be in [0.001, 100] (got 9.2e+18)"},
      {"workload: {arrival: gamma, load_qps: 5, cv: 1e-300}\n",
       "'workload.cv': must be in [0.001, 100] (got 1e-300)"},
      {"workload: {load_qps: 5}\nexecutor: {time_scale: 1e308}\n",
       "'executor.time_scale': must be in [0, 1000] (got 1e+308)"},
      {"workload: {load_qps: 5}\nexecutor: {time_scale: -1}\n",
       "'executor.time_scale': must be in [0, 1000] (got -1)"},
      {"workload: {arrival: rps_trace, trace: t.txt, rate_scale: 1e308}\n",
       "'workload.rate_scale': must be in (0, 1000000] (got 1e+308)"},
      {"workload: {arrival: rps_trace, trace: t.txt, time_compression: 9.2e18}\n",
       "'workload.time_compression': must be in (0, 1000000] (got 9.2e+18)"},
      {"workload: {arrival: rps_trace, trace: t.txt, window_start_s: 9e15}\n",
       "'workload.window_start_s': must be in [0, 1000000000] (got 9e+15)"},
      {"workload: {arrival: rps_trace, trace: t.txt, window_end_s: 9e15}\n",
       "'workload.window_end_s': must be in [-1, 1000000000] (got 9e+15)"},
      {"workload: {load_qps: 5}\nseed: -5\n", "'seed': must be in [0, 9007199254740992] (got -5)"},
      {"workload: {load_qps: 5}\nengine: {max_worker_queue: 9e15}\n",
       "'engine.max_worker_queue': must be in [1, 1000000000] (got 9e+15)"},
      {"workload: {load_qps: 5}\nengine: {plan_interval_ms: 1e-9}\n",
       "'engine.plan_interval_ms': must be in [1, 86400000] (got 1e-09)"},
      {"workload: {load_qps: 5}\nengine: {series_interval_ms: 0.5}\n",
       "'engine.series_interval_ms': must be in [1, 86400000] (got 0.5)"},
      {"workload: {load_qps: 1000000}\nduration_s: 101\n",
       "'workload.load_qps' x 'duration_s' = 1.01e+08 arrivals expected, more than a run "
       "can hold (at most 100000000)"},
  };
  for (const auto& [yaml, expect] : cases) {
    auto cfg = ParseExperimentConfig(kBase + yaml, "x.yaml");
    const Status st = cfg.ok() ? ExpandRuns(*cfg).status() : cfg.status();
    ASSERT_FALSE(st.ok()) << yaml;
    EXPECT_NE(st.message().find(expect), std::string::npos) << yaml << " -> " << st.message();
  }
  const std::vector<std::string> edges = {
      "workload: {load_qps: 1000000}\nduration_s: 100\n",
      "workload: {arrival: gamma, load_qps: 5, cv: 100}\n",
      "workload: {arrival: gamma, load_qps: 5, cv: 0.001}\n",
      "workload: {load_qps: 5}\nexecutor: {time_scale: 1000}\n",
      "workload: {load_qps: 5}\nengine: {plan_interval_ms: 1, series_interval_ms: 1}\n",
  };
  for (const std::string& yaml : edges) {
    auto cfg = ParseExperimentConfig(kBase + yaml, "x.yaml");
    ASSERT_TRUE(cfg.ok()) << yaml;
    auto runs = ExpandRuns(*cfg);
    EXPECT_TRUE(runs.ok()) << yaml << " -> " << runs.status().ToString();
  }
}

TEST(ExperimentConfigTest, UnknownKeysSuggestAndListTheValidKeys) {
  auto cfg = ParseExperimentConfig("wrokers: 3\n", "x.yaml");
  ASSERT_FALSE(cfg.ok());
  const std::string top = cfg.status().message();
  EXPECT_EQ(top.rfind("x.yaml:1:1: unknown key 'wrokers' (did you mean 'workers'? top-level keys "
                      "and sections: name, suite, task, hardware, hardware_prices, workers, ",
                      0),
            0u)
      << top;
  EXPECT_NE(top.find("workload, executor, engine, policy, server, plan"), std::string::npos) << top;
  EXPECT_NE(top.find("; see docs/config.md)"), std::string::npos) << top;
  // A key in a known section lists that section.
  cfg = ParseExperimentConfig("workload:\n  lod_qps: 3\n", "x.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().message(),
            "x.yaml:2:3: unknown key 'workload.lod_qps' (did you mean 'workload.load_qps'? keys "
            "under 'workload.': workload.arrival, workload.load_qps, workload.cv, "
            "workload.trace, workload.window_start_s, workload.window_end_s, "
            "workload.rate_scale, workload.time_compression, workload.sizes, "
            "workload.app_weights, workload.app_priorities; see docs/config.md)");
  // A top-level key that belongs in a section.
  cfg = ParseExperimentConfig("arrival: poisson\n", "x.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("did you mean 'workload.arrival'?"), std::string::npos)
      << cfg.status().message();
  // No close key: no suggestion, still the list.
  cfg = ParseExperimentConfig("frobnicate: 1\n", "x.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().message().find("did you mean"), std::string::npos);
  EXPECT_NE(cfg.status().message().find("top-level keys and sections: name, suite"),
            std::string::npos);
  // Sweep keys and --set keys get the same hint.
  cfg = ParseExperimentConfig("sweep: {wokers: [1, 2]}\n", "x.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("x.yaml:1:9: unknown sweep key 'wokers' (did you mean "
                                        "'workers'?"),
            std::string::npos)
      << cfg.status().message();
  cfg = ParseExperimentConfig("workers: 2\n", "x.yaml");
  ASSERT_TRUE(cfg.ok());
  Status st = ApplyOverrides(&*cfg, {"executor.latncy=p50"});
  EXPECT_EQ(st.message(),
            "--set: unknown key 'executor.latncy' (did you mean 'executor.latency'? keys under "
            "'executor.': executor.latency, executor.time_scale; see docs/config.md)");
}

}  // namespace
}  // namespace sloserve

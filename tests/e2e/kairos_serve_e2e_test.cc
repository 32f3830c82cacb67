// End-to-end: `sloserve serve` on a heterogeneous deployment with Kairos dispatch, driven
// by `sloserve loadgen --sizes deeprecsys`, against `sloserve sim` of the same config —
// real processes on 127.0.0.1. With the same seed, loadgen draws the same arrival offsets
// and query sizes as the simulator, and serve's emulated executor draws batch durations
// with the simulator's service-time model, so the live run should track the simulation.
//
// Real processes run in real time, so what is asserted is chosen not to depend on the
// machine's speed: counts (every scheduled request sent and answered exactly once, the same
// arrivals as the simulation, where the queries went), consistency between the client's and
// the server's accounts, and timing compared with the simulation only with wide margins
// or one-sidedly (a busy machine can only add latency). Achieved throughput is printed,
// not asserted: the benchmarks measure speed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e/sloserve_paths.h"
#include "support/http_get.h"
#include "support/listen_port.h"
#include "support/sanitized.h"
#include "support/subprocess.h"

namespace sloserve {
namespace {

using json = nlohmann::json;
using testing::RunProcess;
using testing::Subprocess;

using testing::kBin;
constexpr double kLoadSeconds = 4;

// RM2 (QoS 350 ms) on 1 g4dn.xlarge + 3 r5n.large, one query per instance at a time,
// DeepRecSys sizes, sampled latencies (what serve's emulated executor and sim share).
std::string WriteConfig() {
  const std::string path =
      ::testing::TempDir() + "/kairos_serve_e2e_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << "suite: kairos-recsys\n"
                         "task: rm2\n"
                         "hardware: \"g4dn.xlarge:1,r5n.large:3\"\n"
                         "seed: 1\n"
                         "duration_s: "
                      << kLoadSeconds
                      << "\n"
                         "workload: {arrival: poisson, load_qps: 25, sizes: deeprecsys}\n"
                         "executor: {latency: sample}\n"
                         "policy: {dispatch: kairos, batching: single}\n";
  return path;
}

struct LiveServer {
  std::unique_ptr<Subprocess> process;
  uint16_t port = 0;
};

// `extra`: more arguments (e.g. --set of a planning policy).
LiveServer StartServer(const std::string& config, const std::string& dispatch,
                       const std::vector<std::string>& extra = {}) {
  LiveServer s;
  // Admission off, as in sim (its default there): live and simulated runs must serve
  // every query the same way to be compared (docs/admission.md).
  std::vector<std::string> args{kBin,
                                "serve",
                                config,
                                "--set",
                                "policy.dispatch=" + dispatch,
                                "--set",
                                "engine.admission=off",
                                "--port",
                                "0",
                                "--duration",
                                "120",
                                "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  s.process = std::make_unique<Subprocess>(args);
  EXPECT_TRUE(s.process->WaitForStderr("listening on", std::chrono::seconds(30)))
      << s.process->err();
  s.port = testing::ListenPort(s.process->err());
  return s;
}

// The loadgen command of a live run: same seed, rate and sizes as the sim config.
std::vector<std::string> LoadgenArgs(uint16_t port, double qps) {
  return {kBin,         "loadgen",
          "--port",     std::to_string(port),
          "--model",    "rm2",  // input name and datatype from the model metadata
          "--qps",      std::to_string(qps),
          "--duration", std::to_string(kLoadSeconds),
          "--sizes",    "deeprecsys",
          "--shape",    "-1,4",
          "--seed",     "1",
          "--slo-ms",   "350",
          "--json"};
}

// Stops the server (SIGTERM) and returns its final metrics JSON.
json StopServer(LiveServer& s) {
  s.process->Signal(SIGTERM);
  auto done = s.process->Wait();
  EXPECT_EQ(done.exit_code, 0) << done.err;
  return json::parse(done.out, nullptr, /*allow_exceptions=*/false);
}

// Prometheus series `name{hardware="..."} value` -> {hardware: value}.
std::map<std::string, double> PerHardware(const std::string& text, const std::string& name) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  const std::string prefix = name + "{hardware=\"";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    const size_t quote = line.find('"', prefix.size());
    out[line.substr(prefix.size(), quote - prefix.size())] = std::stod(line.substr(quote + 2));
  }
  return out;
}

// The value of the unlabelled Prometheus series `name` (NaN when absent).
double Gauge(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  }
  return std::nan("");
}

// One JSON row per dispatch policy of `sloserve sim` on the config at `qps`.
std::map<std::string, json> Simulate(const std::string& config, double qps,
                                     const std::string& dispatch_list) {
  auto r = RunProcess({kBin, "sim", config, "--set", "load_qps=" + std::to_string(qps), "--set",
                       "policy.dispatch=" + dispatch_list, "--json", "--no-progress"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, json> rows;
  const json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("rows")) {
    for (const json& row : j["rows"]) rows[row["dispatch"].get<std::string>()] = row;
  }
  return rows;
}

// Every request was answered with 200: none lost, refused or timed out.
void ExpectNoneLost(const json& load, const json& server) {
  EXPECT_EQ(load["sent"], load["scheduled"]);
  EXPECT_EQ(load["ok"], load["sent"]) << load.dump();
  EXPECT_EQ(load["http_errors"], 0);
  EXPECT_EQ(load["timeouts"], 0);
  EXPECT_EQ(load["transport_errors"], 0);
  EXPECT_EQ(server["arrived"], load["sent"]);
  EXPECT_EQ(server["completed"], server["arrived"]);
  EXPECT_EQ(server["dropped"], 0);
}

TEST(KairosServeE2eTest, LiveKairosDeploymentTracksTheSimulation) {
  const std::string config = WriteConfig();
  constexpr double kQps = 25;  // moderate: the simulation meets QoS for every query
  LiveServer server = StartServer(config, "kairos");
  ASSERT_NE(server.port, 0);
  auto run = RunProcess(LoadgenArgs(server.port, kQps));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json load = json::parse(run.out);
  const std::string metrics = testing::HttpGetBody(server.port, "/metrics");
  const json live = StopServer(server);
  const json sim = Simulate(config, kQps, "kairos")["kairos"];
  ASSERT_TRUE(sim.is_object());
  ASSERT_TRUE(live.is_object());
  SCOPED_TRACE("loadgen: " + load.dump() + "\nserver: " + live.dump() + "\nsim: " + sim.dump());

  EXPECT_EQ(load["sizes"], "deeprecsys");
  EXPECT_GT(load["rows_mean"].get<double>(), 150);  // DeepRecSys: about 240
  // Same seed: the live run sends exactly the simulated arrivals.
  EXPECT_EQ(load["scheduled"], sim["arrived"]);
  ExpectNoneLost(load, live);

  // The client and the server agree on which requests met the QoS (the server's verdict
  // travels in each response): attainment = 1 - violation rate, nothing lost.
  const double n = load["sent"].get<double>();
  EXPECT_NEAR(load["slo_attainment_server"].get<double>(),
              1.0 - live["violation_rate"].get<double>(), 0.5 / n);
  // The simulation meets QoS at this load; live, violations are rare too (a wide margin:
  // most queries finish far inside 350 ms, so only a machine stalled for a large part of
  // the run would miss many).
  EXPECT_LE(sim["violation_rate"].get<double>(), 0.02);
  EXPECT_LE(live["violation_rate"].get<double>(), sim["violation_rate"].get<double>() + 0.25);
  // Latencies: the emulated workers hold each batch at least its sampled time, so the live
  // median cannot fall far below the simulated one, whatever the machine; above, only a
  // wide ratio on the server's own measure (the client's adds HTTP on a possibly busy
  // machine, so it is bounded below only).
  const double sim_p50 = sim["p50_ms"];
  EXPECT_GE(live["p50_ms"].get<double>(), 0.5 * sim_p50);
  EXPECT_LE(live["p50_ms"].get<double>(), 3.0 * sim_p50);
  EXPECT_GE(load["latency_ms"]["p50"].get<double>(), 0.5 * sim_p50);
  const double sim_qps = sim["throughput_qps"];

  std::printf(
      "live vs sim at %.0f qps: p50 %.1f (server %.1f) / %.1f ms, p99 %.1f (server %.1f) / "
      "%.1f ms, violations %.4f / %.4f, throughput %.1f / %.1f qps\n",
      kQps, load["latency_ms"]["p50"].get<double>(), live["p50_ms"].get<double>(), sim_p50,
      load["latency_ms"]["p99"].get<double>(), live["p99_ms"].get<double>(),
      sim["p99_ms"].get<double>(), live["violation_rate"].get<double>(),
      sim["violation_rate"].get<double>(), load["achieved_qps"].get<double>(), sim_qps);
  // Both instance types served, and Kairos sent the larger queries to the GPU instance.
  const auto served = PerHardware(metrics, "sloserve_queries_served_total");
  const auto rows = PerHardware(metrics, "sloserve_rows_served_total");
  const auto workers = PerHardware(metrics, "sloserve_workers");
  ASSERT_EQ(served.size(), 2u) << metrics;
  EXPECT_EQ(workers.at("g4dn.xlarge"), 1);
  EXPECT_EQ(workers.at("r5n.large"), 3);
  EXPECT_GT(served.at("g4dn.xlarge"), 0);
  EXPECT_GT(served.at("r5n.large"), 0);
  EXPECT_EQ(served.at("g4dn.xlarge") + served.at("r5n.large"), live["completed"].get<double>());
  // (A margin of 5%: under ASan on a loaded 2-core machine the live split measured 1.15x,
  // against 1.3x and more on a normal build.)
  EXPECT_GT(rows.at("g4dn.xlarge") / served.at("g4dn.xlarge"),
            1.05 * rows.at("r5n.large") / served.at("r5n.large"))
      << metrics;
  // The responses name the instance type too (loadgen counts them).
  EXPECT_EQ(load["hardware_counts"]["g4dn.xlarge"].get<double>(), served.at("g4dn.xlarge"));
  EXPECT_EQ(load["hardware_counts"]["r5n.large"].get<double>(), served.at("r5n.large"));
  std::remove(config.c_str());
}

TEST(KairosServeE2eTest, LiveKairosViolatesLessThanRibbonWhereTheSimulationSaysSo) {
  const std::string config = WriteConfig();
  // Near saturation of this mix: the simulation (seed 1) has Kairos at about 5% violations
  // and Ribbon, which sends large queries to the slow r5n instances, above 50%.
  constexpr double kQps = 45;
  // Both deployments run side by side (emulated workers cost no CPU) to halve wall time.
  LiveServer kairos = StartServer(config, "kairos");
  LiveServer ribbon = StartServer(config, "ribbon");
  ASSERT_NE(kairos.port, 0);
  ASSERT_NE(ribbon.port, 0);
  Subprocess kairos_load(LoadgenArgs(kairos.port, kQps));
  Subprocess ribbon_load(LoadgenArgs(ribbon.port, kQps));
  const auto kairos_run = kairos_load.Wait();
  const auto ribbon_run = ribbon_load.Wait();
  ASSERT_EQ(kairos_run.exit_code, 0) << kairos_run.err;
  ASSERT_EQ(ribbon_run.exit_code, 0) << ribbon_run.err;
  const json load_k = json::parse(kairos_run.out), load_r = json::parse(ribbon_run.out);
  const json live_k = StopServer(kairos), live_r = StopServer(ribbon);
  auto sim = Simulate(config, kQps, "[kairos,ribbon]");
  ASSERT_TRUE(sim["kairos"].is_object() && sim["ribbon"].is_object());
  ASSERT_TRUE(live_k.is_object() && live_r.is_object());
  SCOPED_TRACE("kairos live: " + live_k.dump() + "\nribbon live: " + live_r.dump() +
               "\nsim: " + sim["kairos"].dump() + "\n" + sim["ribbon"].dump());
  ExpectNoneLost(load_k, live_k);
  ExpectNoneLost(load_r, live_r);

  const double sim_k = sim["kairos"]["violation_rate"], sim_r = sim["ribbon"]["violation_rate"];
  const double viol_k = live_k["violation_rate"], viol_r = live_r["violation_rate"];
  std::printf("violation rate at %.0f qps: kairos live %.4f sim %.4f, ribbon live %.4f sim %.4f\n",
              kQps, viol_k, sim_k, viol_r, sim_r);
  ASSERT_LT(sim_k + 0.2, sim_r);  // the premise: the simulation separates them widely
  // The two live runs share the machine (side by side, same arrivals), so a busy machine
  // hurts both: compare them with each other, with a wide margin.
  EXPECT_LT(viol_k + 0.2, viol_r);
  // Near saturation the live rates depend on the machine's timer jitter (a busy machine
  // delays completions a little, which compounds at ~97% utilization), so against the
  // simulation Kairos is held one-sidedly: live cannot do much better than simulated (a
  // faster machine only gets closer to the simulation).
  EXPECT_GE(viol_k, sim_k - 0.1);
  std::remove(config.c_str());
}

// Kairos' planning inside a live deployment (`planning: kairos_mix`, docs/kairos-planning.md
// "Inside a running deployment"): WND on the mix Kairos picks for DeepRecSys sizes, and
// the queries grow to a Gaussian around 600 rows 2 s into the load. The re-planned server
// adds base instances (and what else the pick for the new sizes holds) and violates the
// QoS far less than the same deployment left as it is, run side by side with the same
// arrivals. Every request is answered once in both.
TEST(KairosServeE2eTest, KairosMixReplansALiveDeploymentWhenQueriesGrow) {
  // 800 requests/s across two servers and two load generators: under a sanitizer the
  // machine, not the mix, would set the violations. The plan itself runs under ASan in
  // kairos_mix_test.
  if (SLOSERVE_TEST_SANITIZED) GTEST_SKIP() << "800 requests/s side by side: Release only";
  const std::string config =
      ::testing::TempDir() + "/kairos_mix_e2e_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(config) << "suite: kairos-recsys\n"
                           "task: wnd\n"
                           "hardware: \"g4dn.xlarge:1,r5n.large:13\"\n"
                           "seed: 1\n"
                           "executor: {latency: sample}\n"
                           "engine: {plan_interval_ms: 500}\n"
                           "policy: {dispatch: kairos, batching: single}\n";
  LiveServer fixed = StartServer(config, "kairos");
  LiveServer mixed = StartServer(
      config, "kairos",
      {"--set", "policy.planning=kairos_mix", "--set", "policy.budget_per_hour=2.5", "--set",
       "policy.max_instances=g4dn.xlarge:5,c5n.2xlarge:6,r5n.large:17,t3.xlarge:15"});
  ASSERT_NE(fixed.port, 0);
  ASSERT_NE(mixed.port, 0);
  auto load_args = [](uint16_t port) {
    return std::vector<std::string>{
        kBin,         "loadgen", "--port",  std::to_string(port),
        "--model",    "wnd",     "--qps",   "400",
        "--duration", "8",       "--sizes", "switch:2:deeprecsys/gaussian:600:150",
        "--shape",    "-1,4",    "--seed",  "1",
        "--json"};
  };
  Subprocess fixed_load(load_args(fixed.port));
  Subprocess mixed_load(load_args(mixed.port));
  const auto fixed_run = fixed_load.Wait();
  const auto mixed_run = mixed_load.Wait();
  ASSERT_EQ(fixed_run.exit_code, 0) << fixed_run.err;
  ASSERT_EQ(mixed_run.exit_code, 0) << mixed_run.err;
  const std::string metrics = testing::HttpGetBody(mixed.port, "/metrics");
  const json load_f = json::parse(fixed_run.out), load_m = json::parse(mixed_run.out);
  const json live_f = StopServer(fixed), live_m = StopServer(mixed);
  ASSERT_TRUE(live_f.is_object() && live_m.is_object());
  SCOPED_TRACE("fixed: " + live_f.dump() + "\nkairos_mix: " + live_m.dump() + "\n" + metrics);
  ExpectNoneLost(load_f, live_f);
  ExpectNoneLost(load_m, live_m);
  const auto workers = PerHardware(metrics, "sloserve_workers");
  const auto active = PerHardware(metrics, "sloserve_workers_active");
  EXPECT_GT(workers.at("g4dn.xlarge"), 1) << "the plan added base instances";
  EXPECT_GT(active.at("g4dn.xlarge"), 1) << "and they serve";
  // Per type, the active ones are among the pool's, and they add up to the total gauge.
  double active_sum = 0;
  for (const auto& [type, n] : active) {
    EXPECT_LE(n, workers.at(type)) << type;
    active_sum += n;
  }
  EXPECT_EQ(active_sum, Gauge(metrics, "sloserve_active_workers"));
  // The server says how its deployment changed.
  EXPECT_NE(mixed.process->err().find("plan of 'kairos_mix': workers serving g4dn.xlarge 1 -> "),
            std::string::npos);
  const double viol_f = live_f["violation_rate"], viol_m = live_m["violation_rate"];
  std::printf("violation rate after queries grow: fixed mix %.4f, kairos_mix %.4f\n", viol_f,
              viol_m);
  // (Alone on a quiet machine: 2.4-3.7% against 16.0-16.2%. A busy machine delays both
  // alike, so they are compared with each other, by ratio.)
  EXPECT_GT(viol_f, 0.05);
  EXPECT_LT(viol_m, viol_f / 2);
  std::remove(config.c_str());
}

TEST(KairosServeE2eTest, LoadgenSizesFlagErrors) {
  auto r = RunProcess({kBin, "loadgen", "--rows", "4", "--sizes", "deeprecsys"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--rows and --sizes cannot be combined"), std::string::npos) << r.err;
  r = RunProcess({kBin, "loadgen", "--sizes", "lognormal"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--sizes: unknown query size sampler 'lognormal'"), std::string::npos)
      << r.err;
  r = RunProcess({kBin, "loadgen", "--sizes", "deeprecsys", "--shape", "8,16"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("write -1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sloserve

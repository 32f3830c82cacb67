// End-to-end: the real `sloserve` binary in real processes on 127.0.0.1.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "e2e/sloserve_paths.h"
#include "support/listen_port.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

using testing::RunProcess;
using testing::Subprocess;

using testing::kBin;
using testing::kRoot;

TEST(CliE2eTest, HelpForEveryCommand) {
  for (const char* cmd : {"demo", "serve", "loadgen", "sim", "policies", "profile", "plan"}) {
    auto r = RunProcess({kBin, cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.out.find("usage: sloserve"), std::string::npos) << cmd;
  }
  auto sub = RunProcess({kBin, "plan", "infadapter", "--help"});
  EXPECT_EQ(sub.exit_code, 0) << sub.err;
  EXPECT_NE(sub.out.find("usage: sloserve plan infadapter"), std::string::npos);
  auto r = RunProcess({kBin, "frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command"), std::string::npos);
}

// Control bytes of a config value echoed in an error are escaped (issue 16 item 4): an
// ESC sequence or a carriage return cannot recolour or overwrite the terminal's line.
TEST(CliE2eTest, ControlBytesInConfigValuesAreEscapedInErrors) {
  auto r = RunProcess({kBin, "serve", "--set", "server.port=1\x1b[31m\r"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(
      r.err.find("'server.port': expected a whole number in [0, 65535], got \"1\\x1b[31m\\x0d\""),
      std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
  r = RunProcess(
      {kBin, "sim", kRoot + "/experiments/foundation/edf_image.yaml", "--set", "duration_s=\x07x"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("\\x07x"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x07'), std::string::npos);
}

TEST(CliE2eTest, SimSweepPrintsOneJsonRowPerRun) {
  auto r = RunProcess({kBin, "sim", kRoot + "/experiments/foundation/edf_image.yaml", "--set",
                       "load_qps=[400,2000]", "--set", "duration_s=5", "--json", "--no-progress"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 6u);  // 3 policies x 2 loads
  for (const auto& row : j["rows"]) {
    for (const char* key : {"policy", "load_qps", "workers", "slo_ms", "seed", "accuracy",
                            "violation_rate", "finish_rate", "throughput_qps", "p50_ms", "p95_ms",
                            "p99_ms", "cost_per_hour", "cold_starts"}) {
      EXPECT_TRUE(row.contains(key)) << key;
    }
    EXPECT_EQ(row["workers"], 60);
  }
  // At 2000 qps the slow accurate variant saturates; the fast one does not.
  double fast = 0, slow = 0;
  for (const auto& row : j["rows"]) {
    if (row["load_qps"].get<double>() < 1000) continue;
    if (row["policy"] == "edf-shufflenet05") fast = row["violation_rate"];
    if (row["policy"] == "edf-efficientnet_b4") slow = row["violation_rate"];
  }
  EXPECT_LT(fast, 0.01);
  EXPECT_GT(slow, 0.5);
}

TEST(CliE2eTest, PlanKairosRanksEveryConfigurationWithoutSimulating) {
  const std::string cfg = kRoot + "/experiments/kairos/plan_rm2.yaml";
  auto r = RunProcess({kBin, "plan", "kairos", cfg, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["configurations"], 331);  // the dataset's space: 2.5 $/h, >= 1 g4dn.xlarge
  EXPECT_EQ(j["base"], "g4dn.xlarge");
  ASSERT_EQ(j["top"].size(), 20u);
  double prev = 1e18;
  for (const auto& row : j["top"]) {
    EXPECT_LE(row["cost_per_hour"].get<double>(), 2.5 + 1e-9);
    EXPECT_LE(row["upper_bound_qps"].get<double>(), prev);
    prev = row["upper_bound_qps"];
    EXPECT_GT(row["oracle_qps"].get<double>(), 0);
  }
  EXPECT_GE(j["pick"]["rank"].get<int>(), 1);
  EXPECT_LE(j["pick"]["rank"].get<int>(), 10);
  for (const auto& p : j["policies"]) EXPECT_EQ(p["simulated_configs"], 0);
  // A stated price (hardware_prices:) is the one the budget ranks mixes by: at 1 $/h a
  // g4dn.xlarge leaves room for fewer mixes.
  r = RunProcess({kBin, "plan", "kairos", cfg, "--json", "--set", "hardware_prices.g4dn.xlarge=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["configurations"], 113);
  EXPECT_DOUBLE_EQ(j["top"][0]["cost_per_hour"].get<double>(), 2.49);  // 1 + 10 x 0.149
  // Bad input: a budget below every instance, a QoS no instance meets, unknown types, a
  // search that needs the optimum without simulating the space.
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--budget", "0.1"}, "below the cheapest instance"},
      {{"--set", "slo_ms=40"}, "QoS 40.0 ms"},
      {{"--max", "tpu:3"}, "tpu"},
      {{"--search", "random"}, "--evaluate all"}};
  for (const auto& [flags, message] : bad) {
    std::vector<std::string> argv = {kBin, "plan", "kairos", cfg};
    argv.insert(argv.end(), flags.begin(), flags.end());
    r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 1) << flags[0];
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

// `plan infadapter` on the paper's setting (issue 29): each plan serves the load within
// the budget at 2+ cores per variant, its objective is the reference code's (AA as a
// fraction - 0.05 cores / 20 - 0.001 LC / 8.52 s) recomputed from the printed terms, the
// MILP and the DP agree, beta moves the plans, the deployed state removes the load cost,
// and bad input is named.
TEST(CliE2eTest, PlanInfAdapterSolvesEq1ForEachLoad) {
  const std::string cfg = kRoot + "/experiments/infadapter/plan_paper.yaml";
  const std::string loads = "10,20,40,75,100,150";
  auto plans = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {kBin, "plan", "infadapter", cfg, "--loads", loads, "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out)["rows"] : nlohmann::json::array();
  };
  const nlohmann::json milp = plans({});
  const nlohmann::json dp = plans({"--set", "policy.solver=dp"});
  ASSERT_EQ(milp.size(), 6u);
  ASSERT_EQ(dp.size(), 6u);
  for (size_t i = 0; i < milp.size(); ++i) {
    const auto& row = milp[i];
    double quotas = 0;
    int cores = 0;
    for (const auto& v : row["plan"]) {
      EXPECT_GE(v["cores"].get<int>(), 2) << row;
      EXPECT_LE(v["quota_rps"].get<double>(), v["capacity_rps"].get<double>() + 1e-9);
      quotas += v["quota_rps"].get<double>();
      cores += v["cores"].get<int>();
    }
    EXPECT_NEAR(quotas, row["load_rps"].get<double>(), 1e-6) << row;
    EXPECT_EQ(cores, row["total_cores"].get<int>());
    EXPECT_LE(cores, 20);
    EXPECT_EQ(row["shortfall_rps"].get<double>(), 0);
    const double objective = row["average_accuracy"].get<double>() / 100 - 0.05 * cores / 20 -
                             0.001 * row["load_cost_s"].get<double>() / 8.52;
    EXPECT_NEAR(row["objective"].get<double>(), objective, 1e-9) << row;
    EXPECT_NEAR(dp[i]["objective"].get<double>(), row["objective"].get<double>(), 1e-6) << i;
  }
  // A tenfold beta prices cores higher: never more cores, fewer somewhere.
  const nlohmann::json dear = plans({"--set", "policy.beta=0.5"});
  ASSERT_EQ(dear.size(), 6u);
  int fewer = 0;
  for (size_t i = 0; i < dear.size(); ++i) {
    EXPECT_LE(dear[i]["total_cores"].get<int>(), milp[i]["total_cores"].get<int>()) << i;
    fewer += dear[i]["total_cores"].get<int>() < milp[i]["total_cores"].get<int>();
  }
  EXPECT_GE(fewer, 1);
  // One load, one object; the deployed plan again costs no loading.
  const std::string first = milp[3]["plan"][0]["variant"].get<std::string>() + ":" +
                            std::to_string(milp[3]["plan"][0]["cores"].get<int>());
  auto r = RunProcess({kBin, "plan", "infadapter", cfg, "--load", "75", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["load_rps"], 75.0);
  if (milp[3]["plan"].size() == 1) {
    r = RunProcess({kBin, "plan", "infadapter", cfg, "--load", "75", "--loaded", first, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["load_cost_s"], 0.0) << first;
  }
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--load", "-5"}, "0..1e7"},
      {{"--load", "10", "--loaded", "resnet9000:4"}, "resnet9000"},
      {{"--load", "10", "--loaded", "resnet50:99"}, "1..20"},
      {{"--load", "10", "--policy", "nope"}, "no policy named 'nope'"},
      {{"--load", "10", "--set", "policy.beta=5"}, "beta / 100"},
      {{"--load", "10", "--rule", "gurobi"}, "unknown rule"},
      {{}, "--load"}};
  for (const auto& [flags, message] : bad) {
    std::vector<std::string> argv = {kBin, "plan", "infadapter", cfg};
    argv.insert(argv.end(), flags.begin(), flags.end());
    r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 1) << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  r = RunProcess(
      {kBin, "plan", "infadapter", kRoot + "/experiments/kairos/plan_rm2.yaml", "--load", "10"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no policy with planning: infadapter"), std::string::npos) << r.err;
}

TEST(CliE2eTest, BadConfigsFailWithOneLineNamingTheProblem) {
  auto r = RunProcess({kBin, "sim", kRoot + "/experiments/foundation/edf_image.yaml", "--set",
                       "workers=-3", "--no-progress"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("workers"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = RunProcess({kBin, "sim", "/nonexistent.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent.yaml"), std::string::npos);
  r = RunProcess({kBin, "serve", "--set", "suite=/nonexistent.prof"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nonexistent.prof"), std::string::npos) << r.err;
  r = RunProcess({kBin, "serve", "--set", "slo_ms=0.001"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("impossible SLO"), std::string::npos) << r.err;
  // Server numbers: range-checked, nan and inf refused (never cast), the key named.
  const std::vector<std::pair<std::string, std::string>> bad_numbers = {
      {"server.payload_mb=0", "'server.payload_mb': must be in [1, 1048576] (got 0)"},
      {"server.port=nan", "'server.port': expected a whole number in [0, 65535], got \"nan\""},
      {"server.max_queue=1e30", "'server.max_queue': must be in [1, 100000000] (got 1e+30)"},
      {"server.max_body_mb=inf",
       "'server.max_body_mb': expected a number in [0.001, 4096], got \"inf\""},
      {"server.threads=2.5", "'server.threads': expected a whole number in [1, 256], got \"2.5\""}};
  for (const auto& [set, expect] : bad_numbers) {
    r = RunProcess({kBin, "serve", "--set", set});
    EXPECT_EQ(r.exit_code, 1) << set;
    EXPECT_NE(r.err.find(expect), std::string::npos) << set << ": " << r.err;
  }
}

// Issue 37 (A): `sloserve sim` with an extreme rate or cv spun forever at
// 100% CPU; each is refused with one line naming the key, the value and the range. The
// 60 s wait only tells a refusal from the old endless run.
TEST(CliE2eTest, SimRefusesExtremeNumbersNamingTheRange) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"workload.load_qps=1e308", "'workload.load_qps': must be in [0, 1000000] (got 1e+308)"},
      {"workload.load_qps=9.2e18", "'workload.load_qps': must be in [0, 1000000] (got 9.2e+18)"},
      {"workload.cv=1e308", "'workload.cv': must be in [0.001, 100] (got 1e+308)"},
      {"workload.cv=9.2e18", "'workload.cv': must be in [0.001, 100] (got 9.2e+18)"},
      {"executor.time_scale=1e308", "'executor.time_scale': must be in [0, 1000] (got 1e+308)"},
      {"engine.plan_interval_ms=1e-9", "'engine.plan_interval_ms': must be in [1, 86400000]"},
  };
  for (const auto& [set, expect] : cases) {
    Subprocess p({kBin, "sim", kRoot + "/experiments/foundation/edf_image.yaml", "--set",
                  "workload.arrival=gamma", "--set", set, "--no-progress"});
    ASSERT_TRUE(p.WaitForStderr(expect, std::chrono::seconds(60))) << set << ": " << p.err();
    const auto r = p.Wait();
    EXPECT_EQ(r.exit_code, 1) << set;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // Policy options that become durations: bounded before the conversion (1e300 ms
  // overflowed a Duration, undefined behaviour). The selection cases switch a config
  // whose policy sets no `variant` (an option `fixed` takes, jellyfish_plus and ramsis
  // do not: it would be refused first).
  const std::vector<std::pair<std::vector<std::string>, std::string>> policy_cases = {
      {{"policy.selection=jellyfish_plus", "policy.window_ms=1e300"},
       "selection policy 'jellyfish_plus': option 'window_ms': must be in (0, 86400000] (got "
       "1e+300)"},
      {{"policy.selection=ramsis", "policy.window_ms=1e300"},
       "selection policy 'ramsis': option 'window_ms': must be in (0, 86400000] (got 1e+300)"},
      {{"policy.dispatch=slo_partition", "policy.slo_workers=1e300:60"},
       "option 'slo_workers': expected slo_ms:workers"},
      {{"policy.batching=orloj", "policy.cost_steps=1e300:1"},
       "orloj: option 'cost_steps': offsets must be in [0, 86400000] ms"},
  };
  for (const auto& [sets, expect] : policy_cases) {
    const bool selection = sets[0].rfind("policy.selection=", 0) == 0;
    std::vector<std::string> argv = {
        kBin,
        "sim",
        kRoot + (selection ? "/experiments/admission/overload_image.yaml"
                           : "/experiments/foundation/edf_image.yaml"),
        "--no-progress",
        "--set",
        "duration_s=1"};
    for (const std::string& set : sets) {
      argv.push_back("--set");
      argv.push_back(set);
    }
    Subprocess p(argv);
    ASSERT_TRUE(p.WaitForStderr(expect, std::chrono::seconds(60))) << sets[1] << ": " << p.err();
    EXPECT_EQ(p.Wait().exit_code, 1) << sets[1];
  }
  // loadgen builds its schedule from the same arrival spec: refused before it starts.
  const std::vector<std::pair<std::string, std::string>> loadgen_cases = {
      {"--qps=1e308", "rate_qps must be in (0, 1e+06] (got 1e+308)"},
      {"--duration=1e300", "--duration: must be in [0, 31622400] seconds, got 1e300"},
  };
  for (const auto& [flag, expect] : loadgen_cases) {
    const std::string name = flag.substr(0, flag.find('='));
    const std::string value = flag.substr(flag.find('=') + 1);
    Subprocess p({kBin, "loadgen", "--port", "1", "--wait-ready", "0", name, value});
    ASSERT_TRUE(p.WaitForStderr(expect, std::chrono::seconds(60))) << flag << ": " << p.err();
    EXPECT_EQ(p.Wait().exit_code, 1) << flag;
  }
}

// Issue 37: `suite: /proc/self/environ` printed the environment (the profile parser
// quoted the first record; the trace parsers quoted the line). The path and the problem
// are printed, nothing of the file.
TEST(CliE2eTest, AFileThatIsNotAProfileOrTraceIsNamedNotShown) {
  const testing::ScopedTempDir temp("cli-not-a-profile");
  const std::string file = temp.File("environ");
  std::ofstream(file) << "FAKE_SECRET=abc" << '\0' << "OTHER=1\nmore\n";
  const std::string cfg = kRoot + "/experiments/foundation/edf_image.yaml";
  auto r = RunProcess({kBin, "sim", cfg, "--set", "suite=" + file, "--no-progress"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(file + ":1: not a profile suite"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("SECRET"), std::string::npos) << r.err;
  r = RunProcess({kBin, "serve", "--set", "suite=" + file});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(file + ":1: not a profile suite"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("SECRET"), std::string::npos) << r.err;
  for (const char* kind : {"rps_trace", "qps_interval_trace"}) {
    r = RunProcess({kBin, "sim", cfg, "--set", std::string("workload.arrival=") + kind, "--set",
                    "workload.trace=" + file, "--no-progress"});
    EXPECT_EQ(r.exit_code, 1) << kind;
    EXPECT_NE(r.err.find(file + ":1: "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("SECRET"), std::string::npos) << r.err;
  }
}

// Issue 30: `policies --describe NAME` lists a policy's options from their declarations.
TEST(CliE2eTest, PoliciesDescribeListsAPolicysDeclaredOptions) {
  auto r = RunProcess({kBin, "policies", "--describe", "ramsis", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "ramsis");
  EXPECT_EQ(j["kind"], "selection");
  EXPECT_FALSE(j["summary"].get<std::string>().empty());
  ASSERT_GT(j["options"].size(), 10u);
  auto text = RunProcess({kBin, "policies", "--describe", "ramsis"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::vector<std::string> names;
  for (const auto& o : j["options"]) {
    const std::string name = o["name"];
    names.push_back(name);
    EXPECT_FALSE(o["type"].get<std::string>().empty()) << name;
    EXPECT_FALSE(o["help"].get<std::string>().empty()) << name;
    // The text form has a row naming the option, its type, its allowed values and help.
    const size_t row = text.out.find("\n  " + name + " ");
    ASSERT_NE(row, std::string::npos) << name << "\n" << text.out;
    const std::string line = text.out.substr(row + 1, text.out.find('\n', row + 1) - row - 1);
    EXPECT_NE(line.find(" " + o["type"].get<std::string>() + " "), std::string::npos) << line;
    EXPECT_NE(line.find(o["allowed"].get<std::string>()), std::string::npos) << line;
    EXPECT_NE(line.find(o["help"].get<std::string>()), std::string::npos) << line;
  }
  // The options its page documents are among them.
  for (const char* documented : {"window_ms", "quantile", "accuracy_step", "slo_workers"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), documented), names.end()) << documented;
  }
  // Every listed policy can be described.
  auto list = RunProcess({kBin, "policies", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  for (const auto& p : nlohmann::json::parse(list.out)) {
    if (p["kind"] == "cluster") continue;
    auto d = RunProcess({kBin, "policies", "--describe", p["name"].get<std::string>(), "--json"});
    EXPECT_EQ(d.exit_code, 0) << p["name"] << ": " << d.err;
    EXPECT_EQ(nlohmann::json::parse(d.out)["kind"], p["kind"]) << p["name"];
  }
  // An unknown name: an error with a suggestion; -h documents --describe.
  auto unknown = RunProcess({kBin, "policies", "--describe", "ramsi"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.out, "");
  EXPECT_NE(unknown.err.find("unknown policy 'ramsi' (did you mean 'ramsis'?"), std::string::npos)
      << unknown.err;
  auto help = RunProcess({kBin, "policies", "-h"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--describe NAME"), std::string::npos) << help.out;
}

// Issue 9: what a new user mistypes is named, with the valid names and a suggestion.
TEST(CliE2eTest, MistakesNameTheValidChoices) {
  const std::string cfg = kRoot + "/experiments/foundation/edf_image.yaml";
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{"sim", cfg, "--set", "wrokers=3"},
       "sloserve sim: --set: unknown key 'wrokers' (did you mean 'workers'? top-level keys and "
       "sections: name, "},
      {{"sim", cfg, "--set", "policy.windw_ms=250"},
       "--set: unknown key 'policy.windw_ms' (did you mean 'policy.window_ms'? "},
      {{"sim", cfg, "--set", "policy.variant=resnet5", "--set", "duration_s=1"},
       "selection policy 'fixed': option 'variant': variant 'resnet5' is not in task 'image' of "
       "suite ramsis-image (did you mean 'resnet50'? variants: efficientnet_b0, "},
      {{"serve", "--set", "server.prot=1"},
       "sloserve serve: --set: unknown key 'server.prot' (did you mean 'server.port'? keys under "
       "'server.': server.host, server.port, "},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {kBin};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    argv.push_back("--no-progress");
    if (c.args[0] == "serve") argv.pop_back();
    auto r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 1) << c.args[2] << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  }
  // report --where on a field no row has.
  const testing::ScopedTempDir temp("cli-mistakes");
  const std::string results = temp.File("mistakes.json");
  {
    std::ofstream out(results);
    out << R"({"experiment": "x", "rows": [{"policy": "a", "load_qps": 1, "accuracy": 70,
              "violation_rate": 0.01}]})";
  }
  auto r = RunProcess({kBin, "report", results, "--where", "violation<0.05"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("sloserve report: --where: unknown field 'violation' (did you mean "
                       "'violation_rate'? fields: accuracy, load_qps, policy, violation_rate)"),
            std::string::npos)
      << r.err;
  r = RunProcess({kBin, "report", results, "--where", "violation_rate<0.05"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// report's plots (issue 36 item 3): units on the axes, the rows' SLO drawn on a latency
// plot, min-max bars over seeds, a PNG beside the SVG, a warning for an empty selection,
// and bad plot options named.
TEST(CliE2eTest, ReportPlotsHaveUnitsSloLineBarsAndPng) {
  const testing::ScopedTempDir temp("cli-report");
  const std::string results = temp.File("r.json");
  {
    std::ofstream out(results);
    out << R"({"experiment": "x", "rows": [
      {"policy": "a", "load_qps": 100, "seed": 1, "p99_ms": 40, "slo_ms": 150},
      {"policy": "a", "load_qps": 100, "seed": 2, "p99_ms": 60, "slo_ms": 150},
      {"policy": "a", "load_qps": 200, "seed": 1, "p99_ms": 900, "slo_ms": 150},
      {"policy": "b", "load_qps": 100, "seed": 1, "p99_ms": 20, "slo_ms": 150}]})";
  }
  const std::string out_dir = temp.File("plots");
  auto r = RunProcess({kBin, "report", results, "--y", "p99_ms", "--logy", "--out", out_dir,
                       "--png", "--size", "900x500"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream svg_in(out_dir + "/p99_ms.svg");
  const std::string svg((std::istreambuf_iterator<char>(svg_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(svg.find("p99 latency (ms), log scale"), std::string::npos);
  EXPECT_NE(svg.find("offered load (queries/s)"), std::string::npos);
  EXPECT_NE(svg.find("SLO 150 ms"), std::string::npos);
  EXPECT_NE(svg.find("width=\"900\" height=\"500\""), std::string::npos);
  EXPECT_NE(svg.find("<path d=\"M"), std::string::npos);  // the seeds' min-max bar at 100
  std::ifstream png(out_dir + "/p99_ms.png", std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  r = RunProcess({kBin, "report", results, "--y", "p99_ms", "--where", "load_qps>1000"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--where kept none of the 4 rows"), std::string::npos) << r.err;
  for (const auto& [flag, value, message] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--size", "10x10", "width 240..4000"},
           {"--bars", "stderr", "none, minmax or ci95"},
           {"--hline", "abc", "--hline: expected a number"}}) {
    r = RunProcess({kBin, "report", results, "--y", "p99_ms", "--out", out_dir, flag, value});
    EXPECT_EQ(r.exit_code, 1) << flag;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

// Issue 30: a policy's options belong to that policy. A config that sets `variant` (an
// option of `fixed`) while another selection policy is chosen is refused, naming the
// option and the chosen policies; without the option the same server starts.
TEST(CliE2eTest, ServeRefusesAnOptionTheChosenPoliciesDoNotTake) {
  auto r =
      RunProcess({kBin, "serve", "--port", "0", "--duration", "1", "--set", "workers=2", "--set",
                  "policy.variant=efficientnet_b0", "--set", "policy.selection=jellyfish_plus"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("option 'variant' is not taken by the chosen policies (round_robin, edf, "
                       "jellyfish_plus)"),
            std::string::npos)
      << r.err;
  r = RunProcess({kBin, "serve", "--port", "0", "--duration", "1", "--set", "workers=2", "--set",
                  "policy.selection=jellyfish_plus"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliE2eTest, ServeAndLoadgenAsSeparateProcesses) {
  // A fixed variant, so which model answers does not depend on the load the server
  // measures in real time (the default, RAMSIS, picks by it: a busy machine that delivers
  // requests in bursts would change the answer). --duration only bounds a stray server.
  Subprocess server({kBin, "serve", "--port", "0", "--duration", "600", "--set", "workers=8",
                     "--set", "policy.selection=fixed", "--set", "policy.variant=efficientnet_b0",
                     "--json"});
  ASSERT_TRUE(server.WaitForStderr("listening on", std::chrono::seconds(30))) << server.err();
  const uint16_t listen_port = testing::ListenPort(server.err());
  ASSERT_NE(listen_port, 0) << server.err();
  const std::string port = std::to_string(listen_port);
  auto load = RunProcess({kBin, "loadgen", "--port", port, "--model", "image", "--qps", "100",
                          "--duration", "2", "--suite", "ramsis-image", "--json"});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  auto report = nlohmann::json::parse(load.out);
  EXPECT_GT(report["sent"].get<int>(), 100);
  EXPECT_EQ(report["ok"], report["sent"]);
  EXPECT_NEAR(report["accuracy"].get<double>(), 77.692, 1e-6);  // efficientnet_b0 answers
  // loadgen reads the model's metadata first: an unknown model is refused clearly.
  auto unknown = RunProcess(
      {kBin, "loadgen", "--port", port, "--model", "nope", "--qps", "20", "--duration", "1"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("model 'nope' is not served"), std::string::npos) << unknown.err;
  // With the input given, nothing is looked up: the requests go out, each is answered
  // with a KServe error, and the server keeps serving.
  auto bad = RunProcess({kBin, "loadgen", "--port", port, "--model", "nope", "--qps", "20",
                         "--duration", "1", "--input", "input", "--datatype", "FP32", "--json"});
  ASSERT_EQ(bad.exit_code, 0) << bad.err;
  auto bad_report = nlohmann::json::parse(bad.out);
  EXPECT_EQ(bad_report["ok"], 0);
  server.Signal(SIGTERM);
  auto done = server.Wait();
  EXPECT_EQ(done.exit_code, 0) << done.err;
  auto metrics = nlohmann::json::parse(done.out);
  EXPECT_EQ(metrics["arrived"], report["sent"]);
  EXPECT_EQ(metrics["dropped"], 0);
}

// Issue 16: draining is bounded, but a second SIGTERM means "now": exit 130 at once,
// even with a batch running that would hold the drain for seconds.
TEST(CliE2eTest, ASecondSignalExitsWithoutDraining) {
  Subprocess server({kBin, "serve", "--port", "0", "--duration", "600", "--set", "workers=1",
                     "--set", "policy.selection=fixed", "--set", "policy.variant=efficientnet_b0",
                     "--set", "executor.time_scale=100"});  // batches of seconds
  ASSERT_TRUE(server.WaitForStderr("sloserve: ready", std::chrono::seconds(60))) << server.err();
  const uint16_t port = testing::ListenPort(server.err());
  ASSERT_NE(port, 0) << server.err();
  Subprocess load({kBin, "loadgen", "--port", std::to_string(port), "--model", "image", "--qps",
                   "20", "--duration", "3", "--suite", "ramsis-image"});
  // Wait until the server has work in hand (a request reached it), then stop it twice.
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  server.Signal(SIGTERM);
  ASSERT_TRUE(server.WaitForStderr("sloserve: stopping", std::chrono::seconds(30))) << server.err();
  server.Signal(SIGTERM);
  const auto done = server.Wait();
  EXPECT_EQ(done.exit_code, 130) << done.err;
  EXPECT_NE(done.err.find("second signal: exiting without draining"), std::string::npos)
      << done.err;
}

}  // namespace
}  // namespace sloserve

// End-to-end: bad input to the `sloserve` CLI (corrupt files, out-of-range flags, paths
// that are not what they should be) ends in one error naming the file or flag and the
// value, exit status 1; never a crash, a hang or an allocation sized by the input.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "e2e/sloserve_paths.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

using testing::kBin;
using testing::kRoot;
using testing::RunProcess;

std::string BadInputFileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `levels 999999999999 ...` in a policy-set file allocated ~24 GB and was OOM-killed.
TEST(CliBadInputE2eTest, PolicyShowRefusesACorruptLevelsCount) {
  const testing::ScopedTempDir temp("cli-bad-policy");
  const std::string good = temp.File("p.mdpset");
  auto r = RunProcess({kBin, "policy", "gen", "--suite", "ramsis-image", "--load", "1000", "--out",
                       good, "--no-progress"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = BadInputFileText(good);
  const size_t at = text.find("\nlevels ") + 1;
  ASSERT_NE(at, 0u);
  const size_t count_end = text.find(' ', at + 7);
  const std::string bad = temp.File("bad.mdpset");
  std::ofstream(bad) << text.substr(0, at + 7) << "999999999999" << text.substr(count_end);
  const int line = static_cast<int>(std::count(text.begin(), text.begin() + at, '\n')) + 1;
  r = RunProcess({kBin, "policy", "show", bad});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(bad + ":" + std::to_string(line) + ": levels count 999999999999 but " +
                       text.substr(at + 7, count_end - at - 7) + " values on the line"),
            std::string::npos)
      << r.err;
}

// Rows as `sloserve sim --json` prints them, enough for `sloserve report`.
std::string WriteReportInput(const testing::ScopedTempDir& temp) {
  const std::string path = temp.File("good.json");
  std::ofstream(path)
      << R"({"experiment": "e", "rows": [)"
      << R"({"policy": "a", "load_qps": 100, "accuracy": 70, "violation_rate": 0},)"
      << R"({"policy": "a", "load_qps": 200, "accuracy": 69, "violation_rate": 0}]})";
  return path;
}

// `report --out PATH` where PATH is a regular file, or lies under one, aborted with an
// uncaught std::filesystem::filesystem_error ("terminate called ...").
TEST(CliBadInputE2eTest, ReportOutThatCannotBeADirectoryIsAnError) {
  const testing::ScopedTempDir temp("cli-bad-report-out");
  const std::string input = WriteReportInput(temp);
  const std::string file = temp.File("afile");
  std::ofstream(file) << "x";
  for (const std::string& out : {file, file + "/sub"}) {
    auto r = RunProcess({kBin, "report", input, "--out", out});
    EXPECT_EQ(r.exit_code, 1) << out << ": " << r.err;
    EXPECT_NE(r.err.find("sloserve report: --out: cannot create directory " + out + ": "),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
  }
  auto r = RunProcess({kBin, "report", input, "--out", temp.File("plots/sub")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Durations beyond int64 microseconds (or steady_clock's nanoseconds) wrapped: serve and
// worker stopped at once, loadgen counted every request as a timeout, profile printed a
// negative horizon. Each duration flag is range-checked, the range in the error. The
// 60 s wait only tells a refusal from a run that does not end.
TEST(CliBadInputE2eTest, DurationFlagsBeyondTheirRangeAreRefused) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"serve", "--port", "0", "--duration", "1e10"},
       "sloserve serve: --duration: must be in (0, 31622400] seconds, got 1e10"},
      {{"worker", "--listen", "127.0.0.1:0", "--duration", "1e10"},
       "sloserve worker: --duration: must be in (0, 31622400] seconds, got 1e10"},
      {{"loadgen", "--port", "1", "--wait-ready", "0", "--qps", "10", "--duration", "1",
        "--timeout", "9.3e9"},
       "sloserve loadgen: --timeout: must be in (0, 86400] seconds, got 9.3e9"},
      {{"loadgen", "--port", "1", "--wait-ready", "1e9"},
       "sloserve loadgen: --wait-ready: must be in [0, 86400] seconds, got 1e9"},
      {{"profile", "load-latency", "ramsis-image", "--duration", "1e300"},
       "sloserve profile: --duration: must be in (0, 31622400] seconds, got 1e300"},
      {{"profile", "load-latency", "ramsis-image", "--slo-ms", "100,1e300"},
       "sloserve profile: --slo-ms: must be in (0, 86400000] ms, got 1e+300"},
      {{"policy", "gen", "--load", "100", "--slo-ms", "1e300"},
       "sloserve policy: --slo-ms: must be in (0, 86400000] ms, got 1e300"},
  };
  for (const auto& [flags, expect] : cases) {
    std::vector<std::string> argv = {kBin};
    argv.insert(argv.end(), flags.begin(), flags.end());
    testing::Subprocess p(argv);
    ASSERT_TRUE(p.WaitForStderr(expect, std::chrono::seconds(60))) << expect << ": " << p.err();
    EXPECT_EQ(p.Wait().exit_code, 1) << expect;
  }
}

// A directory given as a config passed for an empty file (serve served the embedded
// defaults, `config check` said "1 file OK"), and /dev/zero hung the reader.
TEST(CliBadInputE2eTest, ADirectoryOrAnEndlessStreamIsNotAConfig) {
  const testing::ScopedTempDir temp("cli-bad-config");
  const std::string dir = temp.path();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"serve", dir, "--port", "0", "--duration", "2"},
       dir + ": is a directory, not a config file"},
      {{"sim", dir}, dir + ": is a directory, not a config file"},
      {{"config", "check", dir}, dir + ": is a directory, not a config file"},
      {{"sim", "/dev/zero"}, "/dev/zero: config file larger than 8 MiB (the limit)"},
      {{"config", "check", "/dev/zero"}, "/dev/zero: config file larger than 8 MiB (the limit)"},
      {{"policy", "show", dir}, dir + ": is a directory, not a policy set"},
  };
  for (const auto& [flags, expect] : cases) {
    std::vector<std::string> argv = {kBin};
    argv.insert(argv.end(), flags.begin(), flags.end());
    testing::Subprocess p(argv);
    ASSERT_TRUE(p.WaitForStderr("sloserve " + flags[0] + ": ", std::chrono::seconds(60)))
        << expect << ": " << p.err();
    const testing::ProcessResult r = p.Wait();
    EXPECT_EQ(r.exit_code, 1) << expect;
    // config check lists the file's errors on stdout, then the count on stderr.
    EXPECT_NE((r.out + r.err).find(expect), std::string::npos) << r.out << r.err;
  }
}

// `--workers 1:1000000000:1` was expanded value by value before anything ran (a hang);
// a step too small to advance a double looped for ever. Ranges are counted first.
TEST(CliBadInputE2eTest, ProfileLoadLatencyListsAreCapped) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--variants", "small", "--loads", "10", "--duration", "1", "--workers", "1:1000000000:1"},
       "--workers: 1:1000000000:1 expands to 1000000000 values; at most 10000 are allowed"},
      {{"--loads", "1e16:2e16:1"},
       "--loads: 1e16:2e16:1 expands to 1e+16 values; at most 10000 are allowed"},
      {{"--workers", "1e12"}, "--workers: expected whole numbers in [1, 100000], got 1e+12"},
  };
  for (const auto& [flags, expect] : cases) {
    std::vector<std::string> argv = {kBin, "profile", "load-latency", "ramsis-image"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    testing::Subprocess p(argv);
    ASSERT_TRUE(p.WaitForStderr(expect, std::chrono::seconds(60))) << expect << ": " << p.err();
    EXPECT_EQ(p.Wait().exit_code, 1) << expect;
  }
}

// slo_ms below 0.0005 rounded to 0 us, which means "not set": the run silently got the
// task's default (150 ms). A positive SLO is at least 1 us, refused as impossible.
TEST(CliBadInputE2eTest, ATinySloIsImpossibleNotUnset) {
  const std::string cfg = kRoot + "/experiments/foundation/edf_image.yaml";
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{kBin, "sim", cfg, "--set", "slo_ms=0.0004", "--no-progress"},
        std::vector<std::string>{kBin, "serve", "--set", "slo_ms=0.0001"}}) {
    auto r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 1) << argv[1] << ": " << r.err;
    EXPECT_NE(r.err.find("slo_ms: impossible SLO 0.001 ms"), std::string::npos) << r.err;
  }
  const testing::ScopedTempDir temp("cli-tiny-slo");
  const std::string multi = temp.File("models.yaml");
  std::ofstream(multi) << "suite: t5-translation\nhardware: c220g5\nworkers: 2\n"
                          "duration_s: 1\nworkload: {arrival: poisson, load_qps: 1}\n"
                          "policy: {dispatch: jsq, batching: fifo, max_batch: 1}\nmodels:\n"
                          "  - {name: small, task: translation, variants: t5-small, slo_ms: "
                          "0.0001}\n";
  auto r = RunProcess({kBin, "sim", multi, "--no-progress"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("slo_ms: impossible SLO 0.001 ms"), std::string::npos) << r.err;
}

// `loadgen --slo-ms -1` (or 0) was accepted and not sent: the run measured the server's
// default SLO while the user asked for another.
TEST(CliBadInputE2eTest, LoadgenRefusesAnSloThatIsNotPositive) {
  for (const char* slo : {"-1", "0", "1e300"}) {
    testing::Subprocess p({kBin, "loadgen", "--port", "1", "--wait-ready", "0", "--slo-ms", slo});
    const std::string expect =
        std::string("sloserve loadgen: --slo-ms: must be in (0, 86400000] ms, got ") + slo;
    ASSERT_TRUE(p.WaitForStderr(expect, std::chrono::seconds(60))) << slo << ": " << p.err();
    EXPECT_EQ(p.Wait().exit_code, 1) << slo;
  }
}

// `serve --duration 0` and `worker --duration 0` ran for ever while -1 was refused "must
// be positive"; --help documents no "0 = until stopped", so 0 is refused too.
TEST(CliBadInputE2eTest, ServeAndWorkerRefuseAZeroDuration) {
  const std::vector<std::vector<std::string>> cases = {
      {kBin, "serve", "--port", "0", "--duration", "0"},
      {kBin, "worker", "--listen", "127.0.0.1:0", "--duration", "0"},
      {kBin, "serve", "--port", "0", "--duration", "-1"}};
  for (const std::vector<std::string>& argv : cases) {
    testing::Subprocess p(argv);
    const std::string expect =
        "sloserve " + argv[1] + ": --duration: must be in (0, 31622400] seconds, got " + argv[5];
    ASSERT_TRUE(p.WaitForStderr(expect, std::chrono::seconds(60))) << argv[1] << ": " << p.err();
    EXPECT_EQ(p.Wait().exit_code, 1) << argv[1];
  }
}

// A bad --start, --tol or --quantile only printed "allowable throughput: bad search
// options" (kairos), or was used as is (plan kairos without --evaluate).
TEST(CliBadInputE2eTest, ThroughputSearchFlagsAreNamedWithTheirRange) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--start", "0"}, "--start: must be in (0, 1000000] qps, got 0"},
      {{"--start", "-5"}, "--start: must be in (0, 1000000] qps, got -5"},
      {{"--tol", "0"}, "--tol: must be in (0, 1], got 0"},
      {{"--tol", "-1"}, "--tol: must be in (0, 1], got -1"},
      {{"--quantile", "0"}, "--quantile: must be in (0, 1), got 0"},
      {{"--quantile", "1"}, "--quantile: must be in (0, 1), got 1"},
      {{"--quantile", "1.5"}, "--quantile: must be in (0, 1), got 1.5"},
  };
  const std::vector<std::vector<std::string>> commands = {
      {"kairos", "throughput", kRoot + "/experiments/foundation/edf_image.yaml"},
      {"plan", "kairos", kRoot + "/experiments/kairos/plan_rm2.yaml"}};
  for (const std::vector<std::string>& command : commands) {
    for (const auto& [flags, expect] : cases) {
      std::vector<std::string> argv = {kBin};
      argv.insert(argv.end(), command.begin(), command.end());
      argv.insert(argv.end(), flags.begin(), flags.end());
      testing::Subprocess p(argv);
      const std::string line = "sloserve " + command[0] + ": " + expect;
      ASSERT_TRUE(p.WaitForStderr(line, std::chrono::seconds(60))) << line << ": " << p.err();
      EXPECT_EQ(p.Wait().exit_code, 1) << line;
    }
  }
}

// A truncated '{', an empty file or random bytes were called "not the JSON of `sloserve
// sim --json` (no 'rows' list)"; they are not JSON at all, and the parser says where.
// A non-string `experiment` threw a type_error (terminate).
TEST(CliBadInputE2eTest, ReportSaysWhenTheInputIsNotJson) {
  const testing::ScopedTempDir temp("cli-bad-report-json");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "not valid JSON (line 1, column 2: syntax error while parsing object key"},
      {"",
       "not valid JSON (line 1, column 1: syntax error while parsing value - unexpected "
       "end of input"},
      // (Split: "\x00FA..." would read FA as more hex digits of the escape.)
      {std::string("\x01\xfe\x00"
                   "FAKE_SECRET",
                   14),
       "not valid JSON (line 1, column 1: syntax error while parsing value"},
      {R"({"runs": []})", "not the JSON of `sloserve sim --json` (no 'rows' list)"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = temp.File("r" + std::to_string(i) + ".json");
    std::ofstream(path, std::ios::binary) << cases[i].first;
    auto r = RunProcess({kBin, "report", path});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("sloserve report: " + path + ": " + cases[i].second), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("SECRET"), std::string::npos) << r.err;
  }
  const std::string named = temp.File("n.json");
  std::ofstream(named) << R"({"experiment": 5, "rows": []})";
  auto r = RunProcess({kBin, "report", named});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

// `loadgen --seed -1`, `profile load-latency --seed -1` and `demo --seed -1` were taken
// (wrapped to 2^64 - 1) while a config's `seed` must be in [0, 2^53].
TEST(CliBadInputE2eTest, ANegativeSeedIsRefusedByEveryCommand) {
  const std::vector<std::vector<std::string>> commands = {
      {"loadgen", "--port", "1", "--wait-ready", "0"},
      {"profile", "load-latency", "ramsis-image"},
      {"demo"},
  };
  for (const std::vector<std::string>& command : commands) {
    std::vector<std::string> argv = {kBin};
    argv.insert(argv.end(), command.begin(), command.end());
    argv.insert(argv.end(), {"--seed", "-1"});
    testing::Subprocess p(argv);
    const std::string expect =
        "sloserve " + command[0] + ": --seed: must be in [0, 9007199254740992], got -1";
    ASSERT_TRUE(p.WaitForStderr(expect, std::chrono::seconds(60))) << expect << ": " << p.err();
    EXPECT_EQ(p.Wait().exit_code, 1) << expect;
  }
}

// `profile load-latency --jobs 0` ran with one job while sim, kairos and plan refuse it;
// `--jobs 3e9` passed the check and overflowed the int it became.
TEST(CliBadInputE2eTest, JobsOutOfRangeIsRefusedByEveryCommand) {
  const std::string cfg = kRoot + "/experiments/foundation/edf_image.yaml";
  const std::vector<std::vector<std::string>> commands = {
      {"profile", "load-latency", "ramsis-image"},
      {"sim", cfg},
      {"kairos", "throughput", cfg},
      {"plan", "kairos", kRoot + "/experiments/kairos/plan_rm2.yaml"},
  };
  for (const std::vector<std::string>& command : commands) {
    for (const char* jobs : {"0", "-3", "3e9"}) {
      std::vector<std::string> argv = {kBin};
      argv.insert(argv.end(), command.begin(), command.end());
      argv.insert(argv.end(), {"--jobs", jobs});
      testing::Subprocess p(argv);
      const std::string expect = "sloserve " + command[0] + ": --jobs: must be in [1, 1024]";
      ASSERT_TRUE(p.WaitForStderr(expect, std::chrono::seconds(60))) << expect << ": " << p.err();
      EXPECT_EQ(p.Wait().exit_code, 1) << expect;
    }
  }
}

// `kairos throughput --tune nosuch=1:5:1` ran every search untuned: an option no run's
// policy takes is refused up front, naming the options they do take.
TEST(CliBadInputE2eTest, KairosTuneRefusesAnOptionNoPolicyTakes) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/experiments/foundation/edf_image.yaml",
       "--tune: option 'nosuch' is not taken by the experiment's policies (their options: "
       "drop_expired, variant, max_batch)"},
      {"/experiments/kairos/rm2_compare.yaml",
       "--tune: option 'nosuch' is not taken by the experiment's policies (their options: "},
  };
  for (const auto& [cfg, expect] : cases) {
    testing::Subprocess p({kBin, "kairos", "throughput", kRoot + cfg, "--tune", "nosuch=1:5:1"});
    ASSERT_TRUE(p.WaitForStderr("sloserve kairos: " + expect, std::chrono::seconds(60)))
        << cfg << ": " << p.err();
    EXPECT_EQ(p.Wait().exit_code, 1) << cfg;
  }
  testing::Subprocess p({kBin, "kairos", "throughput",
                         kRoot + "/experiments/kairos/rm2_compare.yaml", "--tune",
                         "drs_treshold=10:1000:20"});
  ASSERT_TRUE(p.WaitForStderr("did you mean 'drs_threshold'?", std::chrono::seconds(60)))
      << p.err();
  EXPECT_EQ(p.Wait().exit_code, 1);
}

// `demo --baseline nosuch` was refused only when the comparison run started, after the
// whole adaptive ramp (about 30 s by default): checked before any run, with a hint.
TEST(CliBadInputE2eTest, DemoRefusesAnUnknownBaselineBeforeAnyRun) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nosuch",
       "sloserve demo: --baseline: 'nosuch' is not a variant of task 'image' of suite "
       "ramsis-image (expected none or one of: efficientnet_b0, "},
      {"resnet5", "(did you mean 'resnet50'? expected none or one of: "},
  };
  for (const auto& [baseline, expect] : cases) {
    auto r = RunProcess({kBin, "demo", "--baseline", baseline});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("serving"), std::string::npos) << r.out;
  }
}

// `loadgen --connections 99999999 --max-connections 99999999999` was accepted (the cast to
// int wrapped) and opened sockets up to the open-file limit. Both are bounded as
// server.max_connections, and a cap beyond `ulimit -n` is refused with what fits.
TEST(CliBadInputE2eTest, LoadgenConnectionsAreBounded) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--connections", "99999999", "--max-connections", "99999999999"},
       "--connections: must be in [1, 1000000], got 99999999"},
      {{"--max-connections", "99999999999"},
       "--max-connections: must be in [1, 1000000], got 99999999999"},
      {{"--connections", "0"}, "--connections: must be in [1, 1000000], got 0"},
      {{"--connections", "600"}, "--connections: must be at most --max-connections (512), got 600"},
  };
  for (const auto& [flags, expect] : cases) {
    std::vector<std::string> argv = {kBin, "loadgen", "--port", "1", "--wait-ready", "0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 1) << expect;
    EXPECT_NE(r.err.find("sloserve loadgen: " + expect), std::string::npos) << r.err;
  }
  auto r = RunProcess({"/bin/sh", "-c",
                       "ulimit -n 256 && exec \"$0\" loadgen --port 1 --wait-ready 0 "
                       "--max-connections 1000",
                       kBin});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("sloserve loadgen: --max-connections: 1000 connections need more open "
                       "files than this process's limit of 256 (RLIMIT_NOFILE, `ulimit -n`; at "
                       "most 192 connections fit)"),
            std::string::npos)
      << r.err;
}

// A mix naming one hardware type twice ("n1-4cpu:1,n1-4cpu:2") and a `policies:` list
// whose entries share a name (or, unnamed, a batching/dispatch label) were run: rows no
// one could tell apart. `sim` and `config check` refuse both, naming the key and value.
TEST(CliBadInputE2eTest, RepeatedHardwareTypesAndPolicyNamesAreRefused) {
  const testing::ScopedTempDir temp("cli-bad-repeats");
  const std::string head =
      "suite: ramsis-image\nworkers: 2\nduration_s: 1\nworkload: {arrival: poisson, load_qps: "
      "10}\n";
  const std::string entry =
      "dispatch: round_robin, batching: fifo, selection: fixed, variant: resnet";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {head + "hardware: \"n1-4cpu:1,n1-4cpu:2\"\npolicy: {" + entry + "18}\n",
       "'hardware': type 'n1-4cpu' appears twice in the mix \"n1-4cpu:1,n1-4cpu:2\" (name each "
       "type once, with its total count)"},
      {head + "policies:\n  - {name: a, " + entry + "18}\n  - {name: a, " + entry + "50}\n",
       ":7:6: 'policies[1].policy.name': 'a' repeats policies[0]'s name; each entry needs its "
       "own"},
      {head + "policies:\n  - {" + entry + "18}\n  - {" + entry + "50}\n",
       "'policies[1]': label 'fifo/round_robin' (batching/dispatch, no name) repeats "
       "policies[0]'s; give the entries distinct names"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string cfg = temp.File("c" + std::to_string(i) + ".yaml");
    std::ofstream(cfg) << cases[i].first;
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{kBin, "sim", cfg, "--no-progress"},
          std::vector<std::string>{kBin, "config", "check", cfg}}) {
      auto r = RunProcess(argv);
      EXPECT_EQ(r.exit_code, 1) << argv[1] << " " << cfg << ": " << r.err;
      // config check lists the file's errors on stdout, then the count on stderr.
      EXPECT_NE((r.out + r.err).find(cases[i].second), std::string::npos)
          << argv[1] << ": " << r.out << r.err;
    }
  }
}

// `config check` printed a parse error's file (and line) twice: "F: F: top level must be
// a mapping"; its --json "message" repeated the place given in "file", "line", "column".
TEST(CliBadInputE2eTest, ConfigCheckNamesAParseErrorsPlaceOnce) {
  const testing::ScopedTempDir temp("cli-check-place");
  const std::string list = temp.File("list.yaml");
  std::ofstream(list) << "- a\n- b\n";
  auto r = RunProcess({kBin, "config", "check", list});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(list + ": top level must be a mapping"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(list + ": " + list), std::string::npos) << r.out;
  const std::string twice = temp.File("twice.yaml");
  std::ofstream(twice) << "workers: 2\nworkers: 3\n";
  auto j = RunProcess({kBin, "config", "check", twice, "--json"});
  EXPECT_EQ(j.exit_code, 1);
  const auto diag = nlohmann::json::parse(j.out)["errors"][0];
  EXPECT_EQ(diag["line"], 2) << j.out;
  EXPECT_EQ(diag["message"].get<std::string>().find(twice), std::string::npos) << j.out;
}

// A config without a load (an empty file included) said "arrival spec (kind 'poisson'):
// rate_qps must be in (0, 1e+06] (got 0)": a field no config has.
TEST(CliBadInputE2eTest, SimWithoutALoadNamesTheKey) {
  const testing::ScopedTempDir temp("cli-no-load");
  const std::string cfg = temp.File("noload.yaml");
  std::ofstream(cfg) << "suite: ramsis-image\nworkers: 2\nduration_s: 2\n";
  auto r = RunProcess({kBin, "sim", cfg, "--no-progress"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("'workload.load_qps' is required for workload.arrival 'poisson'"),
            std::string::npos)
      << r.err;
}

// `sim --json --csv` printed JSON; --csv and --series on a cluster: experiment were
// ignored; `plan kairos --cache DIR` with DIR missing ran every simulation, then failed.
TEST(CliBadInputE2eTest, ConflictingOrIgnoredOutputFlagsAreRefusedUpFront) {
  const std::string cfg = kRoot + "/experiments/foundation/edf_image.yaml";
  const std::string cluster = kRoot + "/experiments/model-aware/sec62_sequential.yaml";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{kBin, "sim", cfg, "--json", "--csv"}, "--json and --csv: give one"},
      {{kBin, "sim", cluster, "--csv"}, "--csv: not for a model-aware placement experiment"},
      {{kBin, "sim", cluster, "--json", "--series"},
       "--series: not for a model-aware placement experiment"},
  };
  for (const auto& [argv, expect] : cases) {
    auto r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 1) << argv[2];
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
  }
  const testing::ScopedTempDir temp("cli-plan-cache");
  const std::string file = temp.File("a-file");
  std::ofstream(file) << "x";
  auto r = RunProcess({kBin, "plan", "kairos", kRoot + "/experiments/kairos/plan_rm2.yaml",
                       "--cache", file + "/sub"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--cache: cannot make directory"), std::string::npos) << r.err;
}

// `report --y ''` printed nothing with exit 0; rows that are not objects were reported as
// "--x: unknown field 'load_qps' (fields: )".
TEST(CliBadInputE2eTest, ReportRefusesNoMetricAndRowsThatAreNotObjects) {
  const testing::ScopedTempDir temp("cli-report-shapes");
  const std::string input = WriteReportInput(temp);
  auto none = RunProcess({kBin, "report", input, "--y", ""});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("--y: no metric given"), std::string::npos) << none.err;
  auto empty_item = RunProcess({kBin, "report", input, "--y", "accuracy,,violation_rate"});
  EXPECT_EQ(empty_item.exit_code, 1);
  EXPECT_NE(empty_item.err.find("--y: an empty metric name"), std::string::npos) << empty_item.err;
  const std::string numbers = temp.File("numbers.json");
  std::ofstream(numbers) << "{\"rows\": [1, 2]}";
  auto r = RunProcess({kBin, "report", numbers});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("rows[0] is not an object of fields"), std::string::npos) << r.err;
}

// `profile show SUITE --hardware TYPO` printed an empty table with exit 0.
TEST(CliBadInputE2eTest, ProfileShowRefusesAnUnknownHardwareType) {
  auto r = RunProcess({kBin, "profile", "show", "ramsis-image", "--hardware", "n1-4cpuu"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("--hardware: 'n1-4cpuu' is not in suite 'ramsis-image' (it has n1-4cpu"),
            std::string::npos)
      << r.err;
}

// `cat x.yaml | sloserve sim /dev/stdin` read the pipe twice (is it a cluster experiment?
// then the config), found it empty the second time and ran the built-in defaults, exit 0.
TEST(CliBadInputE2eTest, SimReadsAConfigFromAPipeOnce) {
  const testing::ScopedTempDir temp("cli-sim-pipe");
  const std::string cfg = temp.File("three.yaml");
  std::ofstream(cfg) << "suite: ramsis-image\nworkers: 3\nduration_s: 1\n"
                        "workload: {arrival: poisson, load_qps: 50}\n";
  auto r = RunProcess({"/bin/sh", "-c", "cat '" + cfg + "' | " + kBin + " sim /dev/stdin --json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["rows"][0]["workers"], 3) << r.out;
}

// A cluster experiment (docs/model-aware.md) naming a key twice: `sim` refused it while
// `config check` read it with yaml-cpp's plain parse and said it was OK.
TEST(CliBadInputE2eTest, ConfigCheckRefusesAClusterExperimentsRepeatedKey) {
  const testing::ScopedTempDir temp("cli-bad-cluster-repeat");
  const std::string cfg = temp.File("cluster.yaml");
  std::ofstream(cfg) << "name: twice\nsuite: t5-translation\nseed: 1\nseed: 2\n"
                        "policies: [random]\ncluster: {machines: 2, hardware: c220g5}\n"
                        "workload: {kind: phases, model: t5-small, count: 2, proc_cores: 1}\n";
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{kBin, "sim", cfg, "--no-progress"},
        std::vector<std::string>{kBin, "config", "check", cfg}}) {
    auto r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 1) << argv[1] << ": " << r.out << r.err;
    EXPECT_NE((r.out + r.err).find(":4:1: key 'seed' given twice"), std::string::npos)
        << argv[1] << ": " << r.out << r.err;
  }
}

// `report --where 'violation_rate<abc'` kept no row with only a warning and exit 0, and
// `--savings nosuch` printed an empty table: both are refused, before any output.
TEST(CliBadInputE2eTest, ReportRefusesATextOrderAndAnUnknownSavingsSeries) {
  const testing::ScopedTempDir temp("cli-bad-report-where");
  const std::string input = WriteReportInput(temp);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--where", "violation_rate<abc"},
       "--where: filter 'violation_rate<abc': < compares numbers, got 'abc' (text compares "
       "with = or != only)"},
      {{"--where", "accuracy>=x1"}, "--where: filter 'accuracy>=x1': >= compares numbers"},
      {{"--savings", "nosuch"},
       "--savings: 'nosuch' is not a policy of the kept rows (--series policy: a)"},
      {{"--savings", "b", "--series", "policy"}, "--savings: 'b' is not a policy"},
  };
  for (const auto& [flags, expect] : cases) {
    std::vector<std::string> argv = {kBin, "report", input};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 1) << expect << ": " << r.err;
    EXPECT_NE(r.err.find("sloserve report: " + expect), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << expect;
  }
  auto r = RunProcess({kBin, "report", input, "--savings", "a", "--where", "policy!=x"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace sloserve

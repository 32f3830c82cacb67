// End-to-end (issue 36 item 4): -h/--help on every command and subcommand, stray
// positional arguments refused, and a top-level help that names what the commands do.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "e2e/sloserve_paths.h"
#include "support/subprocess.h"

namespace sloserve {
namespace {

using testing::kBin;
using testing::kRoot;
using testing::RunProcess;

// Every command and subcommand, as a user types it before -h.
const std::vector<std::vector<std::string>> kCommands = {{"demo"},
                                                         {"serve"},
                                                         {"worker"},
                                                         {"loadgen"},
                                                         {"sim"},
                                                         {"report"},
                                                         {"policy"},
                                                         {"kairos"},
                                                         {"policies"},
                                                         {"profile"},
                                                         {"plan"},
                                                         {"forecast"},
                                                         {"plan", "infadapter"},
                                                         {"profile", "measure"}};

TEST(CliHelpE2eTest, ShortAndLongHelpOnEveryCommand) {
  for (const auto& cmd : kCommands) {
    for (const char* flag : {"-h", "--help"}) {
      std::vector<std::string> argv = {kBin};
      argv.insert(argv.end(), cmd.begin(), cmd.end());
      argv.push_back(flag);
      const std::string what = cmd.back() + " " + flag;
      auto r = RunProcess(argv);
      // profile measure lives in the LibTorch plugin; builds without it answer why.
      if (cmd.back() == "measure" && r.exit_code != 0) {
        EXPECT_NE(r.err.find("LibTorch"), std::string::npos) << r.err;
        continue;
      }
      EXPECT_EQ(r.exit_code, 0) << what << ": " << r.err;
      EXPECT_NE(r.out.find("usage: sloserve " + cmd.front()), std::string::npos)
          << what << ": " << r.out;
      EXPECT_EQ(r.err.find("cannot open"), std::string::npos) << what << ": " << r.err;
    }
  }
  // loadgen -h used to send load to :8000: it prints help and never connects.
  auto r = RunProcess({kBin, "loadgen", "-h", "--port", "1", "--wait-ready", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(CliHelpE2eTest, StrayPositionalsAreRefused) {
  const std::string cfg = kRoot + "/experiments/foundation/edf_image.yaml";
  const std::vector<std::vector<std::string>> cases = {
      {"loadgen", "foo"},
      {"demo", "foo"},
      {"policies", "foo"},
      {"serve", cfg, "foo"},
      {"sim", cfg, "foo"},
      {"worker", cfg, "foo"},
      {"report", "a.json", "foo"},
      {"profile", "show", "ramsis-image", "foo"},
      {"plan", "kairos", cfg, "foo"},
      {"policy", "show", "x", "foo"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {kBin};
    argv.insert(argv.end(), c.begin(), c.end());
    auto r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 2) << c.front() << ": " << r.err;
    EXPECT_NE(r.err.find("unexpected argument 'foo'"), std::string::npos)
        << c.front() << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.front();
  }
}

TEST(CliHelpE2eTest, TopLevelHelpSaysWhatCommandsDo) {
  for (const char* flag : {"-h", "--help"}) {
    auto r = RunProcess({kBin, flag});
    ASSERT_EQ(r.exit_code, 0);
    // demo is a ramp of 7 steps of 4 s, run twice (demo_command.cc's defaults).
    EXPECT_EQ(r.out.find("for 10 s"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("7 steps of 4 s"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("profile measure"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("-h, --help"), std::string::npos) << r.out;
  }
  // The demo's help states the same defaults the help line summarises.
  auto demo = RunProcess({kBin, "demo", "-h"});
  EXPECT_NE(demo.out.find("400,1600,2400,3200,2400,1600,400"), std::string::npos);
  EXPECT_NE(demo.out.find("default 4)"), std::string::npos);
}

}  // namespace
}  // namespace sloserve

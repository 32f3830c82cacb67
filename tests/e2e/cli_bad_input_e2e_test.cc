// End-to-end: bad input to the `sloserve` CLI (corrupt files, out-of-range flags, paths
// that are not what they should be) ends in one error naming the file or flag and the
// value, exit status 1; never a crash, a hang or an allocation sized by the input.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sloserve

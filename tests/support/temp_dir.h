#pragma once
// A fresh directory per test, removed with everything in it at the end. ctest runs tests
// in parallel (and CI runs two builds' suites on one machine), so a fixed name under
// ::testing::TempDir() lets one test overwrite or delete another's files.
#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace sloserve::testing {

class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& prefix = "sloserve-test") {
    std::string pattern = ::testing::TempDir() + "/" + prefix + "-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
      return;
    }
    path_ = pattern;
  }
  ~ScopedTempDir() {
    if (path_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace sloserve::testing

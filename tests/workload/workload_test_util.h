#pragma once
// Helpers for the workload tests: temporary trace files, arrival collection, moments.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "sloserve/workload/arrival_process.h"

namespace sloserve::workload_testing {

// A file under the temp directory, unique per process and call, removed on destruction.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             ("sloserve_workload_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) +
              ".txt"))
                .string();
    std::ofstream(path_) << contents;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::vector<int64_t> DrainUs(ArrivalProcess& p) {
  std::vector<int64_t> out;
  while (std::optional<TimePoint> t = p.Next()) out.push_back(t->time_since_epoch().count());
  return out;
}

struct Moments {
  double mean = 0;
  double stddev = 0;
  double Cv() const { return stddev / mean; }
};

template <typename T>
Moments ComputeMoments(const std::vector<T>& xs) {
  double sum = 0;
  for (T x : xs) sum += static_cast<double>(x);
  const double mean = sum / static_cast<double>(xs.size());
  double ss = 0;
  for (T x : xs) ss += (static_cast<double>(x) - mean) * (static_cast<double>(x) - mean);
  return {mean, std::sqrt(ss / static_cast<double>(xs.size() - 1))};
}

inline std::vector<int64_t> Gaps(const std::vector<int64_t>& times) {
  std::vector<int64_t> gaps;
  gaps.reserve(times.size());
  int64_t prev = 0;
  for (int64_t t : times) {
    gaps.push_back(t - prev);
    prev = t;
  }
  return gaps;
}

// The RAMSIS Twitter trace: the vendored copy if present, else the shared dataset, else "".
inline std::string TwitterQpsTracePath() {
  for (const char* rel : {"/profiles/traces/twitter_04_25_norm.txt",
                          "/../shared/datasets/ramsis/twitter_04_25_norm.txt"}) {
    const std::string p = std::string(SLOSERVE_SOURCE_DIR) + rel;
    if (std::filesystem::exists(p)) return p;
  }
  return "";
}

inline std::string InfAdapterRpsTracePath() {
  const std::string p = std::string(SLOSERVE_SOURCE_DIR) +
                        "/../shared/datasets/infadapter/twitter_rps_per_second.txt";
  return std::filesystem::exists(p) ? p : "";
}

}  // namespace sloserve::workload_testing

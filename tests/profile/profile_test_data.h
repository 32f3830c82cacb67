#pragma once
// A small hand-written suite shared by the profile tests. Line numbers matter: the
// corrupt-input tests replace single lines and expect errors to name them.
#include <cstdint>
#include <span>
#include <vector>

namespace sloserve::profile_test_data {

// Sample lists are spans (LatencyDistribution); compare them as vectors.
inline std::vector<int64_t> ToVector(std::span<const int64_t> s) {
  return {s.begin(), s.end()};
}

inline constexpr const char* kTinySuite[] = {
    /* 1 */ "sloserve-profile 1",
    /* 2 */ "# a comment; blank lines and comments are skipped",
    /* 3 */ "suite tiny",
    /* 4 */ "provenance hand-written for tests (not measured)",
    /* 5 */ "task image 150000 input FP32 -1,3,224,224",
    /* 6 */ "hardware cpu4 0.19 4 15",
    /* 7 */ "variant small image 70.5 100 2000000",
    /* 8 */ "variant big image 80.25 400 5000000",
    /* 9 */ "latency cpu4 small 1 1000 1100 1200",
    /* 10 */ "latency cpu4 small 1 1300",
    /* 11 */ "latency cpu4 small 4 3000 3100",
    /* 12 */ "load cpu4 small 4 10 20",
    /* 13 */ "latency cpu4 big 2 5000",
    /* 14 */ "capacity cpu4 big 750000 700000 12 15",
    /* 15 */ "capacity cpu4 small 500000 - 3.5 4",
    /* 16 */ "exec_hist big app1 1000 500 0.1 0.5 0.4",
};
inline constexpr int kTinyLines = 16;

}  // namespace sloserve::profile_test_data
